"""Batch jobs: at the top the backend contract (backend.py), the store, the service and what a
submission goes through; below, sweeps/, runner/ (what runs on the node) and one folder per backend.

Kept empty of imports: the runner imports this package on compute nodes and must start fast.
"""
