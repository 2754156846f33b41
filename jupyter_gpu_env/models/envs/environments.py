"""Models of the environments and kernels resources."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import AfterValidator, ConfigDict, Field, WithJsonSchema, model_validator

from ..common import ApiModel
from ..fields import LINE_PATTERN, patterned
from .packages import Package, PackagesReport
from .syntax import (
    ENV_NAME_PATTERN,
    MAX_NAME_LENGTH,
    check_env_name,
)

EnvKind = Literal["managed", "own", "shared"]
MadeFrom = Literal["clone", "file", "share"]
EnvName = Annotated[
    str,
    AfterValidator(check_env_name),
    WithJsonSchema({"type": "string", "pattern": ENV_NAME_PATTERN, "maxLength": MAX_NAME_LENGTH}),
]
DISPLAY_NAME_PATTERN = r"^[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f][^\x00-\x1f\x7f]*$"


class ExportFormat(StrEnum):
    """What `GET environments/{name}/export` produces."""

    yaml = "yaml"
    explicit = "explicit"


class Environment(ApiModel):
    """One conda environment, as listed."""

    name: str = Field(
        description=(
            "Unique name in this API: the folder name. A managed environment whose folder name is already "
            "taken (by one of the user's own, or an earlier managed one) is listed as `<name>@<parent folder>`."
        )
    )
    prefix: str = Field(description="Absolute path of the environment.")
    kind: EnvKind = Field(
        description="`managed`: provided by the platform, read-only; `own`: the user's; `shared`: published "
        "by a teammate (or the user) in a shared folder, read-only, cloneable."
    )
    python_version: str | None = Field(default=None, description="Version of the `python` package, if any.")
    package_count: int = Field(ge=0, description="Conda packages plus packages installed with pip only.")
    size_bytes: int | None = Field(
        default=None,
        ge=0,
        description=(
            "Disk space of all its files (hard-linked files counted once); null while `size_state` is "
            "`measuring`."
        ),
    )
    shared_bytes: int | None = Field(
        default=None,
        ge=0,
        description=(
            "Part of `size_bytes` in files hard-linked from elsewhere (the package cache); a clone's new "
            "disk use is `size_bytes - shared_bytes`. Null while `size_state` is `measuring`."
        ),
    )
    size_state: Literal["measured", "measuring"] = Field(
        default="measured",
        description=(
            "`measuring`: the size on disk is being measured in the background (it walks every file); "
            "list again for it."
        ),
    )
    has_ipykernel: bool = Field(description="Whether ipykernel is installed, so a kernel can run in it.")
    kernel_name: str | None = Field(
        default=None,
        description="Name of the Jupyter kernelspec registered for it by this extension, if any.",
    )
    source: str | None = Field(default=None, description="For a clone: the prefix it was cloned from.")
    source_name: str | None = Field(default=None, description="For a clone: the source's name at the time.")
    made_from: MadeFrom | None = Field(
        default=None,
        description=(
            "How this extension made it: cloned from `source`, created from the file `source`, or shared "
            "from the user's environment `source`; null if made elsewhere."
        ),
    )
    created_at: float | None = Field(
        default=None, description="When this extension created it (Unix time); null if made elsewhere."
    )
    owner: str | None = Field(default=None, description="For a shared environment: who published it.")
    description: str | None = Field(
        default=None, description="For a shared environment: what its owner said it is for."
    )
    can_unpublish: bool = Field(
        default=False, description="A shared environment this user published (and so may unpublish)."
    )


class EnvironmentDetail(Environment):
    """One environment with its package list."""

    packages: list[Package]


class EnvironmentList(ApiModel):
    environments: list[Environment]
    sharing: bool = Field(
        default=False,
        description="Whether this server has a shared folder (`c.GpuEnvApp.shared_env_dirs`) to publish to.",
    )


FilePath = Annotated[str, patterned(LINE_PATTERN, "from_file", max_length=4096, min_length=1)]


class NewEnvironmentRequest(ApiModel):
    """A new environment of the user's: a clone of a listed one (`source`), or made from a file
    (`from_file`)."""

    model_config = ConfigDict(
        json_schema_extra={
            # null counts as absent: one of the two is a string, not both
            "anyOf": [
                {
                    "required": ["source"],
                    "properties": {"source": {"type": "string"}, "dry_run": {"const": False}},
                },
                {"required": ["from_file"], "properties": {"from_file": {"type": "string"}}},
            ],
            "not": {
                "required": ["source", "from_file"],
                "properties": {"source": {"type": "string"}, "from_file": {"type": "string"}},
            },
        }
    )

    source: Annotated[str, patterned(LINE_PATTERN, "source", max_length=4096, min_length=1)] | None = Field(
        default=None,
        description="Name of the environment to clone (as listed), or its prefix.",
        examples=["demo-python"],
    )
    from_file: FilePath | None = Field(
        default=None,
        description="A file under the server's root to create it from, as the file browser shows its path: "
        "an environment.yml (conda specs and a `pip:` list), a requirements.txt (PyPI requirements, "
        "installed with the newest Python of the channels), or an explicit lock (`@EXPLICIT`, the exact "
        "packages).",
        examples=["project/environment.yml"],
    )
    name: EnvName = Field(
        description="Name of the new environment: letters, digits, `.`, `_`, `-`; 64 at most.",
        examples=["my-env"],
    )
    dry_run: bool = Field(
        default=False,
        description="With `from_file`: only plan; the task's result is a PackagesPlan of what would be "
        "installed, and nothing is made.",
    )

    @model_validator(mode="after")
    def _one_origin(self) -> NewEnvironmentRequest:
        if (self.source is None) == (self.from_file is None):
            raise ValueError("give either `source` (an environment to clone) or `from_file`, not both")
        if self.dry_run and self.source is not None:
            raise ValueError("`dry_run` plans an environment made from a file; a clone needs no plan")
        return self


class PublishRequest(ApiModel):
    description: Annotated[
        str,
        patterned(
            DISPLAY_NAME_PATTERN, "description", hint="it must be one line of visible text", max_length=300
        ),
    ] = Field(
        description="What teammates should know about it, in one line.", examples=["CUDA 12 + PyTorch 2.4"]
    )
    name: EnvName | None = Field(
        default=None, description="Its name in the shared folder; default: the environment's own name."
    )


class KernelRequest(ApiModel):
    display_name: (
        Annotated[
            str,
            patterned(
                DISPLAY_NAME_PATTERN,
                "display_name",
                hint="it must be one line of visible text",
                max_length=100,
            ),
            AfterValidator(str.strip),
        ]
        | None
    ) = Field(default=None, description="Name shown in the Launcher; default `Python (<environment>)`.")


class KernelInfo(ApiModel):
    """A kernelspec this extension registered for an environment."""

    kernel_name: str = Field(description="Kernelspec name, usable with papermill/nbconvert `--kernel`.")
    display_name: str
    resource_dir: str = Field(description="Folder holding kernel.json.")
    prefix: str = Field(description="The environment the kernel runs in.")
    env_name: str
    env: dict[str, str] = Field(
        description="Variables set for the kernel; `${VAR}` is filled from the server's environment at start."
    )


class CloneReport(ApiModel):
    """What a clone did."""

    packages: int = Field(description="Conda packages in the clone.")
    fetched: list[str] = Field(
        default_factory=list,
        description="Packages missing from the package cache, fetched from their channel.",
    )
    copied_from_source: list[str] = Field(
        default_factory=list,
        description="Packages that could not be fetched, copied file by file from the source instead.",
    )
    untracked_files: int = Field(
        description="Files not owned by any conda package (pip installs, user files)."
    )
    rewritten_files: int = Field(description="Copied text files whose source prefix was replaced.")
    binary_with_prefix: list[str] = Field(
        default_factory=list,
        description="Binary files that embed the source prefix; copied unchanged (rewriting them is unsafe).",
    )
    unreadable: list[str] = Field(
        default_factory=list, description="Untracked files of the source this user may not read; left out."
    )
    seconds: float


class ExportResult(ApiModel):
    format: ExportFormat
    filename: str = Field(description="A file name to save it under.")
    content: str


class CloneResult(ApiModel):
    """The result of a clone task."""

    environment: Environment
    report: CloneReport


class CreateReport(ApiModel):
    """What creating an environment from a file did."""

    from_file: str = Field(description="The file, as it was given.")
    file_kind: Literal["environment.yml", "requirements.txt", "explicit"]
    installed: list[str] = Field(
        description="`name-version-build` of the conda packages, `name==version` of the PyPI ones."
    )
    ignored: list[str] = Field(
        default_factory=list, description="What the file says that was not applied, in words."
    )
    seconds: float


class CreateResult(ApiModel):
    """The result of a task creating an environment from a file."""

    environment: Environment
    report: CreateReport


class PublishResult(ApiModel):
    """The result of a publish task: the shared environment."""

    environment: Environment


class PackagesResult(ApiModel):
    """The result of a package-change task."""

    environment: Environment
    report: PackagesReport


class UndoResult(ApiModel):
    """The result of an undo task."""

    environment: Environment
    restored: str = Field(description="What was restored, in one sentence.")
    done: str = Field(description="What the undo did, in the past tense: `Undid +pip:tabulate`.")
