"""The SLURM backend: sbatch of the runner, one squeue per poll, the pure script builder and parsers."""

from .backend import SlurmBackend

__all__ = ["SlurmBackend"]
