"""``python -m jupyter_gpu_env.runner JOB_FOLDER``: run a batch job — its notebook (see
jobs/runner/runner.py), or, for a job.json of kind ``kernel``, host a batch kernel (batchkernels/host)."""

if __name__ == "__main__":
    from .system.startup import lean_start

    lean_start()  # before papermill imports jsonschema: seconds off every job's start

    import sys
    from pathlib import Path

    from .contracts import jobfiles

    args = sys.argv[1:]
    spec = jobfiles.read_json(Path(args[0]) / jobfiles.JOB_JSON) if len(args) == 1 else None
    if spec is not None and spec.get("kind") == "kernel" and spec.get("format") == jobfiles.JOB_FORMAT:
        for stream in (sys.stdout, sys.stderr):
            stream.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # the log is followed live
        from .batchkernels.host.host import main as host

        host(Path(args[0]).resolve(), spec)
    else:
        from .jobs.runner.runner import main

        main()
