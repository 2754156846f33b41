"""Tests of jupyter_gpu_env.jobs (a package: test modules of the same name live in several folders)."""
