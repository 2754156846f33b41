"""Where GPU readings come from: NVML, nvidia-smi, or recorded outputs; ``chain`` picks one per machine."""

from .chain import GpuReaders
from .reading import GpuReading

__all__ = ["GpuReaders", "GpuReading"]
