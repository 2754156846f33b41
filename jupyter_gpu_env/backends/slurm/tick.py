"""The SLURM chain's waiting job (:mod:`.chain`), run on the cluster with no Jupyter server:
``python -m jupyter_gpu_env.backends.slurm.tick --due T --generation G FOLDER``.

Under the schedule's lock it first submits its successor for the next due time (so a failure below never
ends the schedule), then starts the run due at ``T``: unless the schedule was paused or deleted
meanwhile, its document changed (an older generation: the server armed another chain), the previous
run still runs and overlap is ``skip`` (recorded as skipped), or it starts too late (recorded as
missed). The run is an ordinary batch job whose folder holds its own ``record.json``: the server
adopts it when it next looks. Output goes to the waiting job's log (``tick.log`` in the schedule folder).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import time
from pathlib import Path

from ...contracts import jobfiles
from ...contracts.schedules import folder as files
from ...contracts.schedules.locking import locked
from ...contracts.schedules.timing import parse
from ...system.startup import lean_start
from . import chain, script
from .controller import SlurmController
from .observe import JOB_ID_FILE, read_id
from .words import ENDED_STATES

MODULE = chain.TICK_MODULE

log = logging.getLogger(MODULE)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s tick: %(message)s", stream=sys.stdout)
    parser = argparse.ArgumentParser(prog=f"python -m {MODULE}")
    parser.add_argument("folder", type=Path)
    parser.add_argument("--due", type=float, required=True)
    parser.add_argument("--generation", type=int, required=True)
    args = parser.parse_args(argv)
    return asyncio.run(slurm_tick(args.folder.resolve(), args.due, args.generation))


async def slurm_tick(where: Path, due: float, generation: int) -> int:
    with locked(where):
        doc = files.read_doc(where)
        if doc is None or not doc.active or doc.generation != generation:
            log.info("schedule paused, deleted or changed since this job was submitted: nothing to do")
            return 0
        settings = doc.backend_settings
        controller = SlurmController(
            settings.get("commands") or {},
            float(settings.get("command_timeout") or 30.0),
            str(settings.get("slurm_conf") or ""),
        )
        links = chain.SlurmChain(controller)
        options = chain.options_from_json(settings.get("options") or {})
        now = time.time()
        upcoming = parse(doc.expression, doc.timezone, minimum_period=0).next_runs(max(now, due), 1)
        if upcoming:
            try:
                armed = await links.arm(where, doc.id, doc.generation, upcoming[0], options)
                log.info("%s", armed.message)
            except Exception as e:  # the run due still starts; the schedule shows as lost, to re-arm
                log.error("the next run could not be set up in SLURM: %s", e)
        else:
            log.info("this was the schedule's last run")
        if now - due > doc.starting_deadline_seconds:
            late = f"SLURM started it {round(now - due)} s after its time, past the deadline of {doc.starting_deadline_seconds} s."
            files.record_outcome(where, due, "missed", message=late)
            log.info("%s", late)
            return 0
        if doc.overlap == "skip":
            previous = await _still_running(where, controller)
            if previous is not None:
                files.record_outcome(
                    where, due, "skipped", message=f"The previous run ({previous}) still runs."
                )
                log.info("skipped: the previous run %s still runs", previous)
                return 0
        if doc.sweep is not None:
            return await _sweep(where, doc, due, controller, options)
        job, run = files.new_run(where, doc, due)
        try:
            text = script.sbatch_script(job, run, options)
            path = run / script.SCRIPT
            path.write_text(text)
            slurm_id = await controller.sbatch(path, "scheduled run")
        except Exception as e:  # the run's record says why; the chain goes on
            files.write_record(
                run, job.model_copy(update={"state": "failed", "reason": "submit_failed", "message": str(e)})
            )
            files.record_outcome(where, due, "started", job.id, f"It could not be submitted: {e}")
            log.error("the run could not be submitted: %s", e)
            return 1
        (run / JOB_ID_FILE).write_text(slurm_id + "\n")
        files.write_record(run, job.model_copy(update={"backend_job_id": slurm_id}))
        files.record_outcome(where, due, "started", job.id)
        log.info("run %s submitted as SLURM job %s", job.id, slurm_id)
        return 0


async def _sweep(
    where: Path,
    doc: files.ScheduleDoc,
    due: float,
    controller: SlurmController,
    options: script.SbatchOptions,
) -> int:
    """The scheduled sweep due: its folders made, its runs submitted as one job array."""
    assert doc.sweep is not None
    sweep, jobs, base = files.new_sweep(where, doc, due)
    folders = [base / Path(j.job_dir).name for j in jobs]
    indexes = [j.group_index or 0 for j in jobs]
    runs = base / f"runs-{sweep.id}.txt"
    path = base / f"sweep-{sweep.id}.sbatch"
    try:
        runs.write_text(script.runs_file(list(zip(indexes, (j.id for j in jobs), folders, strict=True))))
        path.write_text(
            script.sbatch_array_script(jobs[0], base, runs, indexes, doc.sweep.max_concurrent, options)
        )
        array_id = await controller.sbatch(path, "scheduled sweep")
    except Exception as e:  # its runs' records say why; the chain goes on
        for job, folder in zip(jobs, folders, strict=True):
            failed = job.model_copy(update={"state": "failed", "reason": "submit_failed", "message": str(e)})
            files.write_record(folder, failed)
        files.record_outcome(where, due, "started", None, f"It could not be submitted: {e}", sweep.id)
        log.error("the sweep could not be submitted: %s", e)
        return 1
    for job, folder, i in zip(jobs, folders, indexes, strict=True):
        (folder / JOB_ID_FILE).write_text(f"{array_id}_{i}\n")
        files.write_record(folder, job.model_copy(update={"backend_job_id": f"{array_id}_{i}"}))
    files.record_outcome(where, due, "started", None, "", sweep.id)
    log.info("sweep %s of %d runs submitted as SLURM job array %s", sweep.id, len(jobs), array_id)
    return 0


async def _still_running(where: Path, controller: SlurmController) -> str | None:
    """The id of the schedule's latest run (or sweep) while it (or one of its runs) has not ended."""
    names = files.run_names(where)
    if not names:
        return None
    latest = where / files.RUNS / names[-1]
    runs = files.sweep_runs(latest) if "-sweep-" in names[-1] else [latest]
    unended = [i for run in runs if jobfiles.read_status(run) is None and (i := read_id(run)) is not None]
    if not unended:
        return None
    seen = await controller.squeue(unended)  # one squeue for all of a sweep's runs
    if any(job.state not in ENDED_STATES for job in seen.values()):
        return names[-1].rsplit("-", 1)[-1]
    return None


if __name__ == "__main__":
    lean_start()  # a tick submits a job: seconds off each (system/startup.py)
    sys.exit(main())
