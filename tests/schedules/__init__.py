"""Tests of jupyter_gpu_env.schedules (a package: test modules of the same name live in several folders)."""
