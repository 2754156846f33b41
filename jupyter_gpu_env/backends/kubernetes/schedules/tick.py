"""A CronJob's pod, run on the cluster with no Jupyter server:
``python -m jupyter_gpu_env.backends.kubernetes.schedules.tick FOLDER``.

It makes the run's folder and record under the schedule's lock, then becomes the runner in this same
pod (the ordinary pod entry point). The CronJob's ``concurrencyPolicy`` does the overlap. A new pod of
the same Job (an opportunistic run Kubernetes or Kueue stopped for other work) resumes its run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from ....contracts import jobfiles
from ....contracts.schedules import folder as files
from ....contracts.schedules.locking import locked
from ....system.startup import lean_start
from ..entrypoint import ENTRYPOINT

MODULE = (
    "jupyter_gpu_env.backends.kubernetes.schedules.tick"  # the CronJob's command (no kubernetes client here)
)
K8S_JOB_ENV = "JUPYTER_GPU_ENV_BACKEND_JOB_ID"  # the Job a CronJob made, through the downward API


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {MODULE}")
    parser.add_argument("folder", type=Path)
    parser.add_argument(
        "--run-here", action="store_true", help="(what every CronJob's pod does; the default)"
    )
    args = parser.parse_args(argv)
    return run_here(args.folder.resolve())


def run_here(where: Path) -> int:
    """A CronJob's pod: the run's folder and record made here, then this process becomes its runner."""
    with locked(where):
        doc = files.read_doc(where)
        if doc is None or not doc.active:
            print("tick: the schedule was paused or deleted: nothing to do", flush=True)
            return 0
        if doc.sweep is not None:  # the backend refuses to arm one; a rewritten document is not obeyed
            print("tick: a scheduled sweep cannot run in one pod", file=sys.stderr, flush=True)
            return 1
        now = time.time()
        k8s_job = os.environ.get(K8S_JOB_ENV)
        resumed = _stopped_run(where, k8s_job) if k8s_job else None
        if resumed is not None:  # a new pod of the same Job: the run goes on in its own folder
            print(f"tick: resuming run {resumed.name} of Job {k8s_job}", flush=True)
            run = resumed
        else:
            job, run = files.new_run(where, doc, now)
            if k8s_job:
                files.write_record(run, job.model_copy(update={"backend_job_id": k8s_job}))
            files.record_outcome(where, now, "started", job.id)
    # The ordinary pod entry point from here: the log both in log.txt and the pod's, SIGTERM passed on.
    os.execv("/bin/sh", ["/bin/sh", "-c", ENTRYPOINT, "gpu-env-runner", str(run), sys.executable])


def _stopped_run(where: Path, k8s_job: str, look_back: int = 20) -> Path | None:
    """The run a pod of Job ``k8s_job`` started before, if it was an opportunistic run stopped for other
    work (no status.json): Kubernetes replaced its pod (podFailurePolicy) or Kueue admitted its Job again."""
    for name in reversed(files.run_names(where)[-look_back:]):
        run = where / files.RUNS / name
        try:
            record = files.read_record(run)
        except jobfiles.Damaged:
            continue
        if record is not None and record.backend_job_id == k8s_job:
            ended = (run / jobfiles.STATUS).exists()
            return run if record.priority == "opportunistic" and not ended else None
    return None


if __name__ == "__main__":
    lean_start()  # a tick submits a job: seconds off each (system/startup.py)
    sys.exit(main())
