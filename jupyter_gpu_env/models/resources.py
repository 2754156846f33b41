"""What a job asks of a machine: CPUs, memory, GPUs or a MIG slice, a time limit; in the forms people
write them, and as a job record holds them."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import ConfigDict, Field, model_validator

from .common import ApiModel
from .fields import patterned, whole_number

MAX_CPUS = 1024
MAX_GPUS = 64
# Integers of bytes up to 2^53: exact in JSON for every client (JavaScript's numbers included).
MAX_MEMORY_INT = (1 << 53) - 1
MAX_TIME_MINUTES = 999_999

# The forms people write, as regular expressions shared by the parser here and the OpenAPI document,
# so that what the document calls valid is exactly what is accepted. No absolute ceiling beyond the
# digits these forms allow: each backend states its own limits (`GET backends`) and refuses beyond.
# `1g.10gb`, `3g.40gb`, `1g.10gb+me` (NVIDIA's media-extension profiles).
MIG_PROFILE_PATTERN = r"^[1-7]g\.[0-9]{1,3}gb(\+me)?$"
MIG_PROFILE_RE = re.compile(MIG_PROFILE_PATTERN)
# A positive amount with a binary unit: `512M`, `4G`, `4GiB`, `1.5T` (never all zeros).
MEMORY_PATTERN = r"^ *(?![0.]*[ KkMmGgTt])([0-9]{1,6}(\.[0-9]{1,3})?) *([KkMmGgTt])([Ii]?[Bb])? *$"
_MEMORY_RE = re.compile(MEMORY_PATTERN)
# SLURM's forms: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS (never all zeros).
TIME_LIMIT_PATTERN = (
    r"^ *(?![-0:]* *$)("
    r"(?P<minutes>[0-9]{1,6})"
    r"|(?P<ms_m>[0-9]{1,6}):(?P<ms_s>[0-5]?[0-9])"
    r"|(?P<h>[0-9]{1,5}):(?P<h_m>[0-5]?[0-9]):(?P<h_s>[0-5]?[0-9])"
    r"|(?P<d>[0-9]{1,3})-(?P<d_h>[01]?[0-9]|2[0-3])(:(?P<d_m>[0-5]?[0-9])(:(?P<d_s>[0-5]?[0-9]))?)?"
    r") *$"
)
_TIME_RE = re.compile(TIME_LIMIT_PATTERN)
_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_memory(value: int | str) -> int:
    """Bytes from an integer (bytes) or a string with a binary unit: ``512M``, ``4G``, ``4GiB``, ``1.5T``.

    Units are powers of 1024, as SLURM reads them. A string without a unit is refused: SLURM would
    read it as megabytes and Kubernetes as bytes, and guessing wrong costs a job.
    """
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError("memory must be a number of bytes or a string such as '4G'")
    if isinstance(value, int):
        if not 1 <= value <= MAX_MEMORY_INT:
            raise ValueError(f"memory in bytes must be from 1 to {MAX_MEMORY_INT}")
        return value
    m = _MEMORY_RE.fullmatch(value)
    if m is None:
        raise ValueError(f"memory '{value}' is not understood; write it like '512M', '4G' or '1.5T'")
    return max(1, int(float(m.group(1)) * _UNITS[m.group(3).upper()]))


def parse_time_limit(value: int | str) -> int:
    """Seconds from SLURM's forms: minutes as a number, ``MM:SS``, ``HH:MM:SS``, ``D-HH``, ``D-HH:MM[:SS]``."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError("time limit must be minutes or a string such as '1:00:00'")
    if isinstance(value, int):
        if not 1 <= value <= MAX_TIME_MINUTES:
            raise ValueError(f"time limit in minutes must be from 1 to {MAX_TIME_MINUTES}")
        return value * 60
    m = _TIME_RE.fullmatch(value)
    if m is None:
        raise ValueError(
            f"time limit '{value}' is not understood; write minutes ('90'), 'HH:MM:SS' ('1:30:00') or "
            "'D-HH:MM:SS'"
        )
    g = {k: int(v) for k, v in m.groupdict().items() if v is not None}
    if "minutes" in g:
        return g["minutes"] * 60
    if "ms_m" in g:
        return g["ms_m"] * 60 + g["ms_s"]
    if "h" in g:
        return (g["h"] * 60 + g["h_m"]) * 60 + g["h_s"]
    return ((g["d"] * 24 + g["d_h"]) * 60 + g.get("d_m", 0)) * 60 + g.get("d_s", 0)


def format_time_limit(seconds: int) -> str:
    """SLURM's ``D-HH:MM:SS`` (or ``HH:MM:SS`` under a day), for sbatch and for people."""
    days, rem = divmod(int(seconds), 86400)
    h, rem = divmod(rem, 3600)
    m, s = divmod(rem, 60)
    return f"{days}-{h:02d}:{m:02d}:{s:02d}" if days else f"{h:d}:{m:02d}:{s:02d}"


def mig_fraction(profile: str) -> float:
    """The share of a whole GPU a MIG profile holds, by compute slices out of seven (A100/H100)."""
    return int(profile[0]) / 7 if MIG_PROFILE_RE.fullmatch(profile) else 0.0


MemoryText = Annotated[
    str,
    patterned(
        MEMORY_PATTERN, "memory", hint="write it like '512M', '4G' or '1.5T' (binary units)", max_length=40
    ),
]
TimeLimitText = Annotated[
    str,
    patterned(
        TIME_LIMIT_PATTERN,
        "time limit",
        hint="write minutes ('90'), 'HH:MM:SS' ('1:30:00') or 'D-HH:MM:SS' ('2-00:00:00')",
        max_length=40,
    ),
]
MigProfile = Annotated[
    str, patterned(MIG_PROFILE_PATTERN, "MIG profile", hint="write it like '1g.10gb' or '3g.40gb'")
]


class Resources(ApiModel):
    """Resources a submission asks for, in the forms people write them. Unset means the backend's default."""

    model_config = ConfigDict(
        json_schema_extra={
            "not": {
                "required": ["gpus", "mig_profile"],
                "properties": {"gpus": {"type": "integer"}, "mig_profile": {"type": "string"}},
            }
        }
    )

    cpus: Annotated[int, whole_number("CPUs", 1, MAX_CPUS)] | None = Field(
        default=None, description=f"CPU cores, 1..{MAX_CPUS}."
    )
    memory: Annotated[int, whole_number("memory in bytes", 1, MAX_MEMORY_INT)] | MemoryText | None = Field(
        default=None,
        description="Bytes, or a string with a binary unit: '512M', '4G', '1.5T'. Each backend states "
        "its own maximum (`GET backends`).",
    )
    gpus: Annotated[int, whole_number("GPUs", 0, MAX_GPUS)] | None = Field(
        default=None, description=f"Whole GPUs, 0..{MAX_GPUS}. Not with mig_profile."
    )
    mig_profile: MigProfile | None = Field(
        default=None, description="A MIG slice such as `1g.10gb` or `3g.40gb`, instead of whole GPUs."
    )
    time_limit: (
        Annotated[int, whole_number("time limit in minutes", 1, MAX_TIME_MINUTES)] | TimeLimitText | None
    ) = Field(
        default=None,
        description="Minutes, or SLURM's 'HH:MM:SS' / 'D-HH:MM:SS'. Each backend states its own maximum.",
    )

    @model_validator(mode="after")
    def _gpus_or_mig(self) -> Resources:
        if self.gpus is not None and self.mig_profile is not None:
            raise ValueError("ask for either whole GPUs (gpus) or a MIG slice (mig_profile), not both")
        return self

    def normalized(self) -> JobResources:
        return JobResources(
            cpus=self.cpus,
            memory_bytes=parse_memory(self.memory) if self.memory is not None else None,
            gpus=self.gpus,
            mig_profile=self.mig_profile,
            time_limit_seconds=parse_time_limit(self.time_limit) if self.time_limit is not None else None,
        )


class JobResources(ApiModel):
    """The resources of a job, normalized: bytes and seconds."""

    cpus: int | None = None
    memory_bytes: int | None = None
    gpus: int | None = None
    mig_profile: str | None = None
    time_limit_seconds: int | None = None

    def gpu_units(self) -> float:
        """Whole-GPU equivalents, for GPU-hours: a MIG slice counts its share of the GPU."""
        if self.mig_profile:
            return mig_fraction(self.mig_profile)
        return float(self.gpus or 0)
