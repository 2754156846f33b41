"""``python -m jupyter_gpu_env.runner JOB_FOLDER``: run a batch job's notebook (see jobs/runner/runner.py)."""

if __name__ == "__main__":
    from .system.startup import lean_start

    lean_start()  # before papermill imports jsonschema: seconds off every job's start

    from .jobs.runner.runner import main

    main()
