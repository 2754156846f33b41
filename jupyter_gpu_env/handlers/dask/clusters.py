"""`dask/clusters`, `dask/clusters/{cluster_id}` and its scale and cancel: Dask clusters on the batch system.

A cluster is shut down as everything that runs is cancelled, with `POST .../cancel`; its `DELETE` is the
older spelling, still served and marked deprecated."""

from __future__ import annotations

from ...models.automation.dask import DaskCluster, DaskClusterList, DaskClusterRequest, DaskScaleRequest
from ..base import PAGE, GpuEnvHandler, id_links, operation
from ..jobs import RUN_CODE

CLUSTER_LINKS = id_links(
    "cluster_id",
    ("GetCluster", "get_dask_clusters_cluster_id"),
    ("CancelCluster", "post_dask_clusters_cluster_id_cancel"),
)


_STOP = (
    "Its workers are retired and those still queued cancelled, then the scheduler ends; the cluster "
    "answers `stopping`, then `stopped` once nothing of it is left in the batch system. An ended cluster "
    "is answered as it is."
)


class DaskClustersHandler(GpuEnvHandler):
    @operation(
        "Dask clusters, those not ended first", response=DaskClusterList, query=(*PAGE,), errors=(400,)
    )
    async def get(self) -> DaskClusterList:
        return await self.services.dask.list(limit=self.query["limit"], offset=self.query["offset"])

    @operation(
        "Start a Dask cluster on a backend",
        request=DaskClusterRequest,
        response=DaskCluster,
        status=201,
        errors=(404, 409, 413),
        permissions=RUN_CODE,
        links=CLUSTER_LINKS,
        description="The scheduler runs as a batch job of its own (locally, a process of its own) in the "
        "given environment, kernel's environment or packed image, and keeps its workers itself: it "
        "replaces those that retire before their time limit, and shuts everything down after "
        "`c.DaskClusters.idle_timeout` unused, with or without this server. 409 `dask_not_installed` "
        "when the environment lacks `distributed` (`details` names it and what to add: `packages`, split "
        "into `conda`, those the configured channels hold, and `pip`, the others); 409 when the "
        "backend cannot run the workers asked for.",
        beyond_schema="adapt.minimum not above adapt.maximum, and resources.time_limit equal to walltime where both are given (JSON Schema cannot compare two values; a 400 says so).",
    )
    async def post(self, body: DaskClusterRequest) -> DaskCluster:
        made = await self.services.dask.create(body)
        self.set_header("Location", self.api_url("dask/clusters", made.id))
        return made


class DaskClusterHandler(GpuEnvHandler):
    @operation("One Dask cluster: its scheduler, dashboard and workers", response=DaskCluster, errors=(404,))
    async def get(self, cluster_id: str) -> DaskCluster:
        return await self.services.dask.get(cluster_id)

    @operation(
        "Shut a Dask cluster down",
        response=DaskCluster,
        errors=(404,),
        description=_STOP,
        deprecated="POST dask/clusters/{cluster_id}/cancel",
    )
    async def delete(self, cluster_id: str) -> DaskCluster:
        return await self.services.dask.stop(cluster_id)


class DaskClusterCancelHandler(GpuEnvHandler):
    @operation("Shut a Dask cluster down", response=DaskCluster, errors=(404,), description=_STOP)
    async def post(self, cluster_id: str) -> DaskCluster:
        return await self.services.dask.stop(cluster_id)


class DaskScaleHandler(GpuEnvHandler):
    @operation(
        "Scale a Dask cluster",
        request=DaskScaleRequest,
        response=DaskCluster,
        errors=(404, 409),
        description="A number of workers, or adaptive bounds; the scheduler asks for more, or cancels "
        "queued ones and retires running ones (their data moved to the others). 409 for an ended cluster.",
        beyond_schema="adapt.minimum not above adapt.maximum (JSON Schema cannot compare two values; a 400 says so).",
    )
    async def post(self, cluster_id: str, body: DaskScaleRequest) -> DaskCluster:
        return await self.services.dask.scale(cluster_id, body)
