"""`sweeps`, `sweeps/{sweep_id}` and its cancel, rerun and results: a notebook run once per set of
parameter values, as one object. A sweep is sent with `POST jobs` (a job request with `sweep`); its
runs are jobs. The older paths under `jobs/groups` are served too, marked deprecated (see ROUTES)."""

from __future__ import annotations

from ..models.sweeps import JobGroup, JobGroupList, SweepResults
from .base import PAGE, GpuEnvHandler, Param, operation
from .jobs import RUN_CODE


class SweepsHandler(GpuEnvHandler):
    @operation(
        "Sweeps, newest first, their runs counted per state",
        response=JobGroupList,
        query=(
            *PAGE,
            Param(
                "pipeline",
                {"type": "string", "enum": ["none"]},
                "`none`: not the sweeps that are nodes of a pipeline (`GET pipelines` shows those).",
            ),
        ),
        errors=(400,),
    )
    async def get(self) -> JobGroupList:
        return await self.services.sweeps.list(
            limit=self.query["limit"], offset=self.query["offset"], pipelines=self.query["pipeline"] is None
        )


class SweepHandler(GpuEnvHandler):
    @operation(
        "A sweep: its runs counted per state",
        response=JobGroup,
        errors=(404,),
        description="404 also once every run of it was deleted: a sweep is its runs.",
    )
    async def get(self, sweep_id: str) -> JobGroup:
        return await self.services.sweeps.get(sweep_id)


class SweepCancelHandler(GpuEnvHandler):
    @operation("Cancel every run of a sweep still queued or running", response=JobGroup, errors=(404, 409))
    async def post(self, sweep_id: str) -> JobGroup:
        return await self.services.sweeps.cancel(sweep_id)


class SweepRerunHandler(GpuEnvHandler):
    @operation(
        "Run the failed and cancelled runs of a sweep again",
        response=JobGroup,
        errors=(404, 409),
        permissions=RUN_CODE,
        description="With the same snapshot, parameters and resources; the runs that succeeded or are "
        "still going are left alone. 409 when no run failed or was cancelled, or when a run's folder no "
        "longer holds its snapshot (`snapshot_missing`, naming the run).",
    )
    async def post(self, sweep_id: str) -> JobGroup:
        return await self.services.sweeps.retry_failed(sweep_id)


class SweepResultsHandler(GpuEnvHandler):
    @operation(
        "A sweep's runs side by side: parameters, recorded values, state, duration",
        response=SweepResults,
        query=(
            Param("format", {"type": "string", "enum": ["json", "csv"], "default": "json"}, "json or csv."),
        ),
        errors=(404,),
        also_text=("text/csv",),
        description="Recorded values are those of a cell tagged `results` whose last expression is a dict, "
        "and values glued with scrapbook. `format=csv` answers text/csv, a row per run. A value longer than "
        "`c.GpuEnvApp.sweep_result_value_bytes` is cut there, and so is what comes after "
        "`c.GpuEnvApp.sweep_results_bytes` of values in all: the row's `cut` names those values and its `note` "
        "says where the whole is (the run's output notebook). CSV cells that a spreadsheet would run as a "
        "formula begin with a `'`.",
    )
    async def get(self, sweep_id: str) -> SweepResults | None:
        if self.query["format"] != "csv":
            return await self.services.sweeps.results(sweep_id)
        filename, text = await self.services.sweeps.results_csv(sweep_id)
        self.set_header("Content-Disposition", f'attachment; filename="{filename}"')
        self.finish(text, set_content_type="text/csv; charset=utf-8")
        return None
