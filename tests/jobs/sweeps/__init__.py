"""Tests of jupyter_gpu_env.jobs.sweeps (a package: test modules of the same name live in several folders)."""
