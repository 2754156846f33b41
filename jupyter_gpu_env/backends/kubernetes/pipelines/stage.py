"""A held pipeline node's Job, written beside its jobs before it may start: the very object
:meth:`..backend.KubernetesBackend.submit` (one job) or ``submit_sweep`` (a sweep's Indexed Job) would
create, made by the same builders from the same settings, as the API's JSON in :data:`.carry.MANIFEST`:
in the job's folder, or in the sweep's (the runs' folders' parent, with the runs file its pods read).

The pod of the node's last parent to end creates it from there (:mod:`.carry`); the server, when it hands
the node over itself, creates the same name, and takes the Job it finds (409) when a pod was first.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ....contracts import jobfiles
from ....errors import InvalidRequest
from ....models.jobs import Job
from ....system.atomic import write_atomic, write_json_atomic
from .. import objects
from ..api.namespace import Namespace
from ..sweeps.jobs import IndexedJobs
from .carry import MANIFEST


def node_target(jobs: Sequence[Job], folders: Sequence[Path]) -> Path:
    """Where the node's Job is staged: the job's folder, or the sweep's (every run's folder's parent).
    InvalidRequest unless ``jobs`` are one job, or runs of one sweep."""
    if not jobs or len(jobs) != len(folders):
        raise InvalidRequest("A pipeline node to stage needs its jobs and their folders.")
    group = jobs[0].group_id
    if group is None:
        if len(jobs) != 1:
            raise InvalidRequest("The jobs of one pipeline node are one job or the runs of one sweep.")
        return folders[0]
    if any(j.group_id != group for j in jobs):
        raise InvalidRequest("The jobs of one pipeline node are one job or the runs of one sweep.")
    target = folders[0].parent
    if any(f.parent != target for f in folders):
        raise InvalidRequest(f"The runs of sweep {group} do not share one folder.")
    return target


def max_concurrent(run_folder: Path, runs: int) -> int:
    """The sweep's ``max_concurrent`` as its run's job.json has it (all runs when it says none)."""
    spec = jobfiles.read_json(run_folder / jobfiles.JOB_JSON) or {}
    group = spec.get("group")
    value = group.get("max_concurrent") if isinstance(group, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else runs


async def stage_node(
    ns: Namespace, sweeps: IndexedJobs, jobs: Sequence[Job], folders: Sequence[Path]
) -> Path:
    """Write the node's Job (and a sweep's runs file) into its folder; return the manifest's path.
    InvalidRequest when no Job can be made of it."""
    target = node_target(jobs, folders)

    def write() -> Path:
        ns.connected()  # the namespace settled: the staged Job names it, as a created one does
        if jobs[0].group_id is None:
            try:
                body = objects.job_object(jobs[0], folders[0], ns.settings)
            except ValueError as e:
                raise InvalidRequest(f"{e}.", reason="invalid_request") from None
        else:
            runs_path, table, body = sweeps.build(jobs, folders, max_concurrent(folders[0], len(jobs)))
            write_atomic(runs_path, table)
        path = target / MANIFEST
        write_json_atomic(path, objects.as_dict(body), durable=True)
        return path

    path: Path = await ns.api.run(write, "stage the pipeline node")
    return path
