"""Tests of jupyter_gpu_env.batch.local (a package: test modules of the same name live in several folders)."""
