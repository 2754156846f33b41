"""Batch kernels: a kernelspec whose kernel runs as a job on a backend (SLURM, Kubernetes with Kueue, the
local GPU pool), what registering one asks for, and the sessions (kernels started from it) as they stand."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, model_validator
from pydantic.config import JsonDict

from ..common import ApiModel, Page
from ..fields import line, whole_number
from ..jobs import BackendName, EnvRef, ImageId, JobPriority, KernelName, QueueName
from ..resources import MAX_TIME_MINUTES, JobResources, Resources, TimeLimitText, parse_time_limit

SessionState = Literal["waiting", "starting", "running", "ended"]


def _given(name: str) -> JsonDict:
    return {"required": [name], "properties": {name: {"type": "string"}}}


class BatchKernelRequest(ApiModel):
    """`POST batch-kernels`: a kernel that runs as a job, registered as a kernelspec of its own."""

    model_config = ConfigDict(
        json_schema_extra={"oneOf": [_given("environment"), _given("kernel"), _given("image")]}
    )

    display_name: Annotated[str, line("display name", max_length=120, min_length=1)] | None = Field(
        default=None,
        description="The Launcher's and the kernel picker's name (default: what it runs in and where, "
        "e.g. 'Python (torch) · SLURM gpu · 1g.10gb · 2 h').",
    )
    environment: EnvRef | None = Field(
        default=None, description="The environment the kernel runs in (one of environment, kernel or image)."
    )
    kernel: KernelName | None = Field(default=None, description="A kernelspec whose kernel runs on the node.")
    image: ImageId | None = Field(default=None, description="A packed image the kernel runs from.")
    backend: BackendName = Field(default="local", description="Where the kernel runs (`GET backends`).")
    resources: Resources = Field(
        default_factory=Resources,
        description="What the kernel's job asks of the backend: cpus, memory, gpus or mig_profile, and "
        "`time_limit`, its walltime.",
    )
    walltime: (
        Annotated[int, whole_number("walltime in minutes", 1, MAX_TIME_MINUTES)] | TimeLimitText | None
    ) = Field(
        default=None,
        description="How long the kernel may run (minutes, or 'HH:MM:SS'); the same as `resources.time_limit`, "
        "one of them is enough (default: c.BatchKernels.default_walltime). The notebook is told ten minutes "
        "before it ends.",
    )
    queue: QueueName | None = Field(default=None, description="A queue (SLURM partition, Kueue LocalQueue).")
    priority: JobPriority = Field(
        default="normal",
        description="`opportunistic` where the backend offers it: the kernel may be stopped for other work, "
        "and then ends (an interactive kernel is never resumed elsewhere).",
    )

    @model_validator(mode="after")
    def _consistent(self) -> BatchKernelRequest:
        given = [k for k in ("environment", "kernel", "image") if getattr(self, k)]
        if len(given) != 1:
            raise ValueError(
                "give the environment (or kernel, or packed image) the kernel runs in"
                if not given
                else f"give one of environment, kernel or image, not {' and '.join(given)}"
            )
        old, new = self.walltime, self.resources.time_limit
        if old is not None and new is not None and parse_time_limit(old) != parse_time_limit(new):
            raise ValueError(f"the time limit ({new}) and walltime ({old}) differ: give one of them")
        return self

    @property
    def time_limit(self) -> int | str | None:
        return self.resources.time_limit if self.resources.time_limit is not None else self.walltime


class BatchKernelSession(ApiModel):
    """A kernel started from a batch kernelspec, as it stands: waiting in its queue, starting on its node,
    running, or ended (with why)."""

    kernel_id: str = Field(description="Jupyter's id of the kernel (`api/kernels`).")
    kernel_name: str
    job_id: str | None = Field(default=None, description="Its job (`GET jobs/{job_id}`), once submitted.")
    notebook_path: str = Field(default="", description="The notebook it was started for, if any.")
    state: SessionState
    words: str = Field(
        description="What the notebook's toolbar says, e.g. \"waiting in queue 'gpu', 3rd, estimated start "
        '14:20", "running on node01, 1 h 52 min left", "ended: the walltime was reached".'
    )
    queue_name: str | None = None
    queue_position: int | None = Field(default=None, description="1 = next in its queue.")
    pending_reason: str | None = None
    estimated_start: float | None = Field(
        default=None, description="The scheduler's estimate, epoch seconds."
    )
    node: str | None = Field(default=None, description="Where it runs, as its backend saw it.")
    started_at: float | None = None
    ends_at: float | None = Field(default=None, description="When its walltime runs out, epoch seconds.")
    restarts: int = Field(default=0, description="Kernels restarted within the same allocation.")
    reason: str | None = Field(default=None, description="Why it ended: its job's reason code.")
    message: str | None = None


class BatchKernel(ApiModel):
    """A registered batch kernel: its kernelspec's name, where its kernel runs, and its sessions now."""

    kernel_name: str = Field(description="The kernelspec's name (`GET api/kernelspecs`, the Launcher).")
    display_name: str
    where: str = Field(description="Where it runs, in words: 'SLURM gpu · 1g.10gb · 2 h'.")
    backend: str
    environment: str | None = None
    kernel: str | None = None
    image: str | None = None
    resources: JobResources
    queue: str | None = None
    priority: JobPriority = "normal"
    created_at: float
    sessions: list[BatchKernelSession] = Field(
        default_factory=list,
        description="Its kernels waiting, starting or running now, and those that "
        "ended in the last minutes (with why).",
    )


class BatchKernelList(Page[BatchKernel]):
    """The registered batch kernels, by display name."""
