"""Tests of jupyter_gpu_env.backends.kubernetes (a package: test modules of the same name live in several folders)."""
