"""Tests of jupyter_gpu_env.backends.slurm.dask."""
