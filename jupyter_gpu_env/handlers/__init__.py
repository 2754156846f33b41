"""Thin tornado handlers, one module per resource. ROUTES is the single list of what is served."""

from __future__ import annotations

import re

from .base import API_PREFIX, NotFoundHandler
from .dask.clusters import DaskClusterCancelHandler, DaskClusterHandler, DaskClustersHandler, DaskScaleHandler
from .environments import (
    EnvironmentHandler,
    EnvironmentsHandler,
    ExportHandler,
    GpuCheckHandler,
    HistoryHandler,
    ImageBuildHandler,
    KernelHandler,
    PackageSearchHandler,
    PackagesHandler,
    PublishHandler,
    UndoHandler,
)
from .gpu import ClusterCapacityHandler, GpuHandler, GpuHistoryHandler, GpuReleaseHandler
from .images import ImageDownloadHandler, ImageHandler, ImageKernelHandler, ImagesHandler
from .jobs import (
    AdviceHandler,
    BackendCapacityHandler,
    BackendsHandler,
    JobCancelHandler,
    JobGpuHandler,
    JobHandler,
    JobLogHandler,
    JobParametersHandler,
    JobRerunHandler,
    JobsHandler,
    NotebookParametersHandler,
    UsageHandler,
    UsageWeeksHandler,
)
from .kernels.batch import BatchKernelHandler, BatchKernelsHandler
from .notifications import NotificationsHandler, NotificationTestHandler
from .openapi import OpenApiHandler
from .pipelines import (
    PipelineCancelHandler,
    PipelineFileHandler,
    PipelineHandler,
    PipelineRerunHandler,
    PipelinesHandler,
)
from .schedules import (
    ScheduleHandler,
    SchedulePreviewHandler,
    ScheduleRearmHandler,
    ScheduleRunHandler,
    SchedulesHandler,
    ScheduleSnapshotHandler,
)
from .sweeps import SweepCancelHandler, SweepHandler, SweepRerunHandler, SweepResultsHandler, SweepsHandler
from .tasks import TaskHandler, TasksHandler

# (path under {base_url}gpu-env/api/, handler). Path parameters use OpenAPI's {name} form and
# are turned into tornado regex groups by `tornado_routes`.
ROUTES: list[tuple[str, type]] = [
    ("openapi.json", OpenApiHandler),
    ("gpu", GpuHandler),
    ("gpu/history", GpuHistoryHandler),
    ("gpu/release", GpuReleaseHandler),
    ("gpu/cluster", ClusterCapacityHandler),
    ("environments", EnvironmentsHandler),
    ("environments/{name}", EnvironmentHandler),
    ("environments/{name}/packages", PackagesHandler),
    ("environments/{name}/history", HistoryHandler),
    ("environments/{name}/undo", UndoHandler),
    ("environments/{name}/publish", PublishHandler),
    ("environments/{name}/kernel", KernelHandler),
    ("environments/{name}/export", ExportHandler),
    ("environments/{name}/image", ImageBuildHandler),
    ("environments/{name}/gpu-check", GpuCheckHandler),
    ("packages", PackageSearchHandler),
    ("batch-kernels", BatchKernelsHandler),
    ("batch-kernels/{kernel_name}", BatchKernelHandler),
    ("images", ImagesHandler),
    ("images/{image_id}", ImageHandler),
    ("images/{image_id}/download", ImageDownloadHandler),
    ("images/{image_id}/kernel", ImageKernelHandler),
    ("jobs", JobsHandler),
    ("jobs/usage", UsageHandler),
    ("jobs/advice", AdviceHandler),
    ("jobs/usage/weeks", UsageWeeksHandler),
    ("jobs/{job_id}", JobHandler),
    ("jobs/{job_id}/log", JobLogHandler),
    ("jobs/{job_id}/cancel", JobCancelHandler),
    ("jobs/{job_id}/rerun", JobRerunHandler),
    ("jobs/{job_id}/parameters", JobParametersHandler),
    ("jobs/{job_id}/gpu", JobGpuHandler),
    ("dask/clusters", DaskClustersHandler),
    ("dask/clusters/{cluster_id}", DaskClusterHandler),
    ("dask/clusters/{cluster_id}/scale", DaskScaleHandler),
    ("dask/clusters/{cluster_id}/cancel", DaskClusterCancelHandler),
    ("sweeps", SweepsHandler),
    ("sweeps/{sweep_id}", SweepHandler),
    ("sweeps/{sweep_id}/cancel", SweepCancelHandler),
    ("sweeps/{sweep_id}/rerun", SweepRerunHandler),
    ("sweeps/{sweep_id}/results", SweepResultsHandler),
    ("pipelines", PipelinesHandler),
    ("pipelines/file", PipelineFileHandler),
    ("pipelines/{pipeline_id}", PipelineHandler),
    ("pipelines/{pipeline_id}/cancel", PipelineCancelHandler),
    ("pipelines/{pipeline_id}/rerun", PipelineRerunHandler),
    ("schedules", SchedulesHandler),
    ("schedules/preview", SchedulePreviewHandler),
    ("schedules/{schedule_id}", ScheduleHandler),
    ("schedules/{schedule_id}/run", ScheduleRunHandler),
    ("schedules/{schedule_id}/rearm", ScheduleRearmHandler),
    ("schedules/{schedule_id}/snapshot", ScheduleSnapshotHandler),
    ("backends", BackendsHandler),
    ("backends/{name}/capacity", BackendCapacityHandler),
    ("notebooks/parameters", NotebookParametersHandler),
    ("notifications", NotificationsHandler),
    ("notifications/test", NotificationTestHandler),
    ("tasks", TasksHandler),
    ("tasks/{task_id}", TaskHandler),
]

# Older paths, served as the current ones they name for a release and marked deprecated in the
# OpenAPI document: a sweep was a "job group", and a sweep's rerun of its failed runs was "retry".
ALIASES: list[tuple[str, str]] = [
    ("jobs/groups", "sweeps"),
    ("jobs/groups/{sweep_id}", "sweeps/{sweep_id}"),
    ("jobs/groups/{sweep_id}/cancel", "sweeps/{sweep_id}/cancel"),
    ("jobs/groups/{sweep_id}/retry", "sweeps/{sweep_id}/rerun"),
    ("jobs/groups/{sweep_id}/results", "sweeps/{sweep_id}/results"),
]

_PARAM = r"(?P<{}>[^/]+)"


def tornado_routes() -> list[tuple[str, type]]:
    handlers = dict(ROUTES)
    # Aliases first: `jobs/groups` would otherwise be taken for the job whose id is "groups".
    out = []
    for path, handler in [(old, handlers[new]) for old, new in ALIASES] + ROUTES:
        pattern = re.sub(r"\{(\w+)\}", lambda m: _PARAM.format(m.group(1)), path.replace(".", r"\."))
        out.append((rf"/{API_PREFIX}/{pattern}/?", handler))
    out.append((rf"/{API_PREFIX}(/.*)?", NotFoundHandler))
    return out
