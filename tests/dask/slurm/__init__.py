"""Tests of jupyter_gpu_env.dask.slurm."""
