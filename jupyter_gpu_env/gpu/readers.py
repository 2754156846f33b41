"""Which GPU source applies on this machine: recorded files, NVML, or nvidia-smi when NVML cannot load.

Every source is wrapped as one coroutine for the sampler: NVML is blocking and runs in a thread;
nvidia-smi goes through the subprocess seam on the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from collections.abc import Awaitable, Callable

from ..errors import GpuEnvError
from . import smi
from .nvml import NvmlReader
from .reading import GpuReading
from .recorded import RecordedSource
from .visibility import mark_visible, visibility_status

log = logging.getLogger(__name__)

GpuSource = Callable[[], Awaitable[GpuReading]]


class GpuReaders:
    """The reading chain of one server; ``close()`` releases NVML."""

    def __init__(self, recorded_source: str = "", nvidia_smi: str = "nvidia-smi") -> None:
        self._recorded = RecordedSource(recorded_source) if recorded_source else None
        self._nvml = None if self._recorded else NvmlReader()
        self._nvidia_smi = nvidia_smi

    async def read(self) -> GpuReading:
        if self._recorded is not None:
            return await asyncio.to_thread(self._recorded.read)
        assert self._nvml is not None
        reading = await asyncio.to_thread(self._nvml.read)
        if reading.status.reason == "no_nvml" and shutil.which(self._nvidia_smi):
            return await self._smi_fallback(reading)
        return reading

    async def _smi_fallback(self, nvml_reading: GpuReading) -> GpuReading:
        try:
            devices = await smi.read_smi(self._nvidia_smi)
        except GpuEnvError as e:
            log.debug("nvidia-smi fallback failed: %s", e)
            return nvml_reading
        devices = mark_visible(devices)
        message = f"{len(devices)} GPU(s) read with nvidia-smi (NVML could not be loaded)."
        return GpuReading(devices, visibility_status(devices, None, reason="ok", message=message))

    def close(self) -> None:
        if self._nvml is not None:
            self._nvml.close()
