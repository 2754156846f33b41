"""Where this user's Jobs live: the API client and the Job builder's settings, the namespace settled on
first use, and what every part of the backend does there (delete a Job, tell whether a folder is on a
volume the pods mount). Shared by the backend, its observer and its sweeps, so none holds another.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from kubernetes import client

from ....errors import Conflict
from ..objects import K8sSettings
from .client import ApiError, KubeApi


class Namespace:
    """``api`` and ``settings``; ``settings.namespace`` empty means the API's own (or ``default``)."""

    def __init__(self, api: KubeApi, settings: K8sSettings) -> None:
        self.api = api
        self.settings = settings

    def connected(self) -> Any:
        """The ApiClient; the first call settles the namespace when the options named none. Blocks."""
        api_client = self.api.client()
        if not self.settings.namespace:
            self.settings = replace(self.settings, namespace=self.api.namespace or "default")
        return api_client

    @property
    def name(self) -> str:
        return self.settings.namespace

    def delete_job(self, name: str, what: str) -> None:
        """Delete the Job ``name`` and, in the background, its pods. Blocks."""
        self.api.raw(
            client.BatchV1Api(self.connected()).delete_namespaced_job,
            name,
            self.name,
            propagation_policy="Background",
            what=what,
        )

    def where(self, queue: str | None) -> str:
        """Where a submitted Job waits, in words: its Kueue queue, else the namespace."""
        queue = queue or self.settings.local_queue
        return f"Kueue queue '{queue}'" if queue else f"namespace '{self.name}'"

    def check_folder_shared(self, folder: Path) -> None:
        """Conflict unless ``folder`` is on a volume the job's pod mounts (at the same path)."""
        mounts = [str(m.get("mountPath") or "") for m in self.settings.volume_mounts]
        for mount in mounts:
            if mount and (folder == Path(mount) or Path(mount) in folder.parents):
                return
        raise Conflict(
            f"The job folder {folder} is not on a volume the job's pod mounts"
            + (f" (mounts: {', '.join(mounts)})" if mounts else " (no volume_mounts are configured)")
            + ". Mount the volume that holds it at the same path: c.KubernetesBackend.volumes and "
            "volume_mounts (see docs/admin-kubernetes.md).",
            reason="job_folder_not_shared",
        )


@contextlib.contextmanager
def gone_already() -> Iterator[None]:
    """Deleting what is already gone (404) is done: nothing is left to stop."""
    try:
        yield
    except ApiError as e:
        if e.status != 404:
            raise
