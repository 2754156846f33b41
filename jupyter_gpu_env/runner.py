"""``python -m jupyter_gpu_env.runner JOB_FOLDER``: run a batch job's notebook (see jobs/runner/runner.py)."""

from .jobs.runner.runner import main

if __name__ == "__main__":
    main()
