"""Models of the environments resources: an environment and the requests on it (`environments`), its
packages and their changes (`packages`), the small answers of the routes (`api`), and the rules a name
or a package spec follows (`syntax`).

``models.envs`` names what :mod:`.environments` holds, so that ``from jupyter_gpu_env.models.envs
import Environment`` reads as the resource it is about.
"""

from .environments import (
    DISPLAY_NAME_PATTERN,
    CloneReport,
    CloneResult,
    CreateReport,
    CreateResult,
    Environment,
    EnvironmentDetail,
    EnvironmentList,
    EnvKind,
    EnvName,
    ExportFormat,
    ExportResult,
    FilePath,
    KernelInfo,
    KernelRequest,
    MadeFrom,
    NewEnvironmentRequest,
    PackagesResult,
    PublishRequest,
    PublishResult,
    UndoResult,
)

__all__ = [
    "DISPLAY_NAME_PATTERN",
    "CloneReport",
    "CloneResult",
    "CreateReport",
    "CreateResult",
    "EnvKind",
    "EnvName",
    "Environment",
    "EnvironmentDetail",
    "EnvironmentList",
    "ExportFormat",
    "ExportResult",
    "FilePath",
    "KernelInfo",
    "KernelRequest",
    "MadeFrom",
    "NewEnvironmentRequest",
    "PackagesResult",
    "PublishRequest",
    "PublishResult",
    "UndoResult",
]
