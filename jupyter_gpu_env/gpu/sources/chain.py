"""Which GPU source applies on this machine: recorded files, NVML, or nvidia-smi when NVML cannot load.

Every source is wrapped as one coroutine for the sampler: NVML is blocking and runs in a thread;
nvidia-smi (:func:`read_smi`) goes through the subprocess seam on the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Awaitable, Callable

from ... import proc
from ...errors import GpuEnvError, Unavailable
from ...models import GpuDevice
from ..visibility import mark_visible, visibility_status
from . import smi
from .nvml import NvmlReader
from .reading import GpuReading
from .recorded import RecordedSource

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
            devices = await read_smi(self._nvidia_smi)
        except GpuEnvError as e:
            log.debug("nvidia-smi fallback failed: %s", e)
            return nvml_reading
        devices = mark_visible(devices)
        message = f"{len(devices)} GPU(s) read with nvidia-smi (NVML could not be loaded)."
        return GpuReading(devices, visibility_status(devices, None, reason="ok", message=message))

    def close(self) -> None:
        if self._nvml is not None:
            self._nvml.close()


async def read_smi(
    nvidia_smi: str = "nvidia-smi",
    *,
    timeout: float = 10.0,  # noqa: ASYNC109 - handed to proc.run, which owns timeouts
) -> list[GpuDevice]:
    """Run ``nvidia-smi -q -x`` and ``nvidia-smi -L`` together and join them.

    Raises what :func:`proc.run` raises: ``Conflict`` (reason ``tool_missing``) without
    nvidia-smi, ``CommandFailed`` when it cannot reach the driver, ``CommandTimeout``. A failing
    ``-L`` only costs the MIG UUIDs: profiles are then inferred. Unreadable XML raises
    ``Unavailable``.
    """
    # -L runs alongside; if -q -x fails it is cancelled (proc.run then kills it), never left behind.
    listing = asyncio.ensure_future(proc.run([nvidia_smi, "-L"], timeout=timeout, check=False))
    try:
        xml_run = await proc.run([nvidia_smi, "-q", "-x"], timeout=timeout)
    except BaseException:
        listing.cancel()
        await asyncio.gather(listing, return_exceptions=True)
        raise
    try:
        list_run: proc.Result | None = await listing
    except GpuEnvError:
        list_run = None
    try:
        devices = smi.parse_smi_xml(xml_run.stdout)
    except ET.ParseError as e:
        raise Unavailable(f"{nvidia_smi} -q -x printed no readable XML ({e})", reason="bad_output") from e
    if list_run is not None and list_run.returncode == 0:
        smi.join_listing(devices, smi.parse_smi_list(list_run.stdout))
    return devices
