"""``python -m jupyter_gpu_env.schedules.tick``: the command SLURM chains and CronJobs armed by an earlier
version still run. Each backend's tick is its own now (:mod:`..backends.slurm.tick`,
:mod:`..backends.kubernetes.schedules.tick`); this hands the arguments to the one they are for, so an
upgrade stops no schedule. Re-arming a schedule (or any change to it) arms the new command.
"""

from __future__ import annotations

import sys

from ..system.startup import lean_start


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if "--run-here" in args:
        from ..backends.kubernetes.schedules import tick as cronjob_tick

        return cronjob_tick.main(args)
    from ..backends.slurm import tick as chain_tick

    return chain_tick.main(args)


if __name__ == "__main__":
    lean_start()  # a tick submits a job: seconds off each (system/startup.py)
    sys.exit(main())
