"""``python -m jupyter_gpu_env.runner JOB_FOLDER``: run a batch job's notebook (see batch/runner/runner.py)."""

from .batch.runner.runner import main

if __name__ == "__main__":
    main()
