"""`pipelines`, `pipelines/file`, `pipelines/{pipeline_id}` and its actions: cancel, rerun from a node."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..models.automation.pipelines import (
    PIPELINE_FILE_PATTERN,
    Pipeline,
    PipelineList,
    PipelineRequest,
    PipelineRerunRequest,
)
from ..models.common import ApiModel
from ..models.fields import patterned
from .base import PAGE, GpuEnvHandler, id_links, operation
from .jobs import RUN_CODE

PIPELINE_LINKS = id_links(
    "pipeline_id",
    ("GetPipeline", "get_pipelines_pipeline_id"),
    ("CancelPipeline", "post_pipelines_pipeline_id_cancel"),
)


class PipelineFileRequest(ApiModel):
    """`POST pipelines/file`: a `*.pipeline.yaml` under the server's root."""

    path: Annotated[
        str,
        patterned(PIPELINE_FILE_PATTERN, "path", hint="it must be a .pipeline.yaml file", max_length=4096),
    ] = Field(
        description="The file, relative to the server's root; its notebook paths are relative to its folder.",
        examples=["analysis/nightly.pipeline.yaml"],
    )


class PipelinesHandler(GpuEnvHandler):
    @operation("Pipelines, newest first", response=PipelineList, query=(*PAGE,), errors=(400,))
    async def get(self) -> PipelineList:
        return await self.services.pipelines.list(limit=self.query["limit"], offset=self.query["offset"])

    @operation(
        "Run notebooks as a pipeline",
        request=PipelineRequest,
        response=Pipeline,
        status=201,
        errors=(409, 413),
        permissions=RUN_CODE,
        links=PIPELINE_LINKS,
        description="Each node is what `POST jobs` takes for one job or one sweep, with `after` (its "
        "parents) and `when`. Everything is checked first and whole: the graph (unknown parents, cycles), "
        "then each node as its own submission would be (a missing notebook, a parameter of the wrong type, "
        "a backend that cannot run it): a 400 naming the node; nothing is made unless all pass (409: more "
        "nodes than `c.GpuEnvApp.max_pipeline_nodes`). A node's notebook receives the parameter `upstream`: per parent, "
        '`{"folder": ..., "results": ...}` (a sweep parent\'s results: its runs\' rows). On SLURM every '
        "node is submitted at once with `--dependency`, so the pipeline goes on with no Jupyter server; "
        "elsewhere a node is handed to its backend when its parents have ended.",
        beyond_schema="the graph: each parent a node of it, no cycle (a 400 names the node).",
    )
    async def post(self, body: PipelineRequest) -> Pipeline:
        made = await self.services.pipelines.submit(body)
        self.set_header("Location", self.api_url("pipelines", made.id))
        return made


class PipelineFileHandler(GpuEnvHandler):
    @operation(
        "Run a pipeline file (`*.pipeline.yaml`)",
        request=PipelineFileRequest,
        response=Pipeline,
        status=201,
        errors=(403, 404, 409, 413),
        permissions=RUN_CODE,
        links=PIPELINE_LINKS,
        description="The file holds what `POST pipelines` takes, in YAML (`nodes` may also map each id to "
        "its node); its notebook paths are relative to its folder. What is wrong with the file is a 400 "
        "naming it (and, for YAML, the line).",
        beyond_schema="the file's content: YAML that holds what `POST pipelines` takes, and its graph (a 400 names the file and, for YAML, the line).",
    )
    async def post(self, body: PipelineFileRequest) -> Pipeline:
        made = await self.services.pipelines.submit_file(body.path)
        self.set_header("Location", self.api_url("pipelines", made.id))
        return made


class PipelineHandler(GpuEnvHandler):
    @operation("One pipeline: its nodes and how they stand", response=Pipeline, errors=(404,))
    async def get(self, pipeline_id: str) -> Pipeline:
        return await self.services.pipelines.get(pipeline_id)


class PipelineCancelHandler(GpuEnvHandler):
    @operation(
        "Cancel a pipeline",
        response=Pipeline,
        errors=(404, 409),
        description="Its running nodes are stopped, the others skipped; nothing of it stays queued in the "
        "batch system. 409 when every node has ended.",
    )
    async def post(self, pipeline_id: str) -> Pipeline:
        return await self.services.pipelines.cancel(pipeline_id)


class PipelineRerunHandler(GpuEnvHandler):
    @operation(
        "Run a pipeline again from a node",
        request=PipelineRerunRequest,
        response=Pipeline,
        errors=(404, 409),
        permissions=RUN_CODE,
        links=PIPELINE_LINKS,
        description="The node and everything below it run again, from their snapshots; the other nodes' "
        "folders and results are handed down as they are. 409 while one of those nodes is queued or running.",
    )
    async def post(self, pipeline_id: str, body: PipelineRerunRequest) -> Pipeline:
        return await self.services.pipelines.rerun(pipeline_id, body.from_node)
