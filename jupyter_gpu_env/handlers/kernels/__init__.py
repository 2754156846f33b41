"""Kernels this extension starts on the batch system: their REST resource (`batch.py`)."""
