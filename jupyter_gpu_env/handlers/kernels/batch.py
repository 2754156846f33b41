"""`batch-kernels` and `batch-kernels/{kernel_name}`: kernels that run as jobs on a backend, registered as
kernelspecs of their own. Jupyter starts them (`POST api/kernels`, opening a notebook) through the
`gpu-env-batch` provisioner; these list where each of their kernels stands."""

from __future__ import annotations

from ...models.kernels.batch import BatchKernel, BatchKernelList, BatchKernelRequest
from ..base import PAGE, GpuEnvHandler, Param, operation
from ..environments import KERNELSPECS

SHUTDOWN = Param(
    "shutdown_kernels",
    {"type": "boolean", "default": False},
    "End its kernels running or waiting first (their jobs are cancelled); without it, they make the "
    "request a 409 that names them.",
)


class BatchKernelsHandler(GpuEnvHandler):
    @operation(
        "Batch kernels: registered kernelspecs whose kernel runs as a job, with their kernels now",
        response=BatchKernelList,
        query=(*PAGE,),
        errors=(400,),
    )
    async def get(self) -> BatchKernelList:
        return await self.services.batch_kernels.list(limit=self.query["limit"], offset=self.query["offset"])

    @operation(
        "Register a kernel that runs as a job on a backend",
        request=BatchKernelRequest,
        response=BatchKernel,
        status=201,
        errors=(404, 409),
        permissions=KERNELSPECS,  # starting it is Jupyter's `POST api/kernels`, which asks for execute
        description="Checked as a job is (backend, environment, kernel or image, the backend's limits), then "
        "written as a kernelspec: it shows in `GET api/kernelspecs` and the Launcher at once, named by "
        "`kernel_name`. Starting it (opening a notebook with it, `POST api/kernels`) submits one job; the "
        "kernel runs on the node the job gets, and a restart stays in that allocation. 409 `no_ipykernel`, "
        "`batch_kernel_nested` (a batch kernel named as what runs), `batch_kernel_exists` (`details` names "
        "it), or beyond the backend's limits.",
        beyond_schema="resources.time_limit equal to walltime where both are given (a 400 says so).",
    )
    async def post(self, body: BatchKernelRequest) -> BatchKernel:
        made = await self.services.batch_kernels.register(body)
        self.set_header("Location", self.api_url("batch-kernels", made.kernel_name))
        return made


class BatchKernelHandler(GpuEnvHandler):
    @operation("One batch kernel and its kernels now", response=BatchKernel, errors=(404,))
    async def get(self, kernel_name: str) -> BatchKernel:
        return await self.services.batch_kernels.get(kernel_name)

    @operation(
        "Unregister a batch kernel",
        response=BatchKernel,
        query=(SHUTDOWN,),
        errors=(400, 404, 409),
        permissions=KERNELSPECS,
        description="Its kernelspec is removed. 409 `kernels_running` while kernels of it run or wait (the "
        "message names them) unless `shutdown_kernels` is true.",
    )
    async def delete(self, kernel_name: str) -> BatchKernel:
        if self.query["shutdown_kernels"]:
            await self.check_permissions((("write", "kernels"),))
        return await self.services.batch_kernels.unregister(
            kernel_name, shutdown=self.query["shutdown_kernels"]
        )
