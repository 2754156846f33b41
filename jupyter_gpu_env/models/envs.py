"""Models of the environments and kernels resources."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import AfterValidator, ConfigDict, Field, WithJsonSchema, model_validator

from ..envs.syntax import (
    ENV_NAME_PATTERN,
    MAX_NAME_LENGTH,
    MAX_SPEC_LENGTH,
    NAME_PATTERN,
    PIP_NAME_PATTERN,
    PIP_REQUIREMENT_PATTERN,
    SPEC_PATTERN,
    check_env_name,
    check_package_name,
    check_pip_name,
    check_pip_requirement,
    check_spec,
)
from .common import ApiModel
from .fields import LINE_PATTERN, ecma, patterned

EnvKind = Literal["managed", "own", "shared"]
PackageKind = Literal["conda", "pypi"]

EnvName = Annotated[
    str,
    AfterValidator(check_env_name),
    WithJsonSchema({"type": "string", "pattern": ENV_NAME_PATTERN, "maxLength": MAX_NAME_LENGTH}),
]
PackageSpec = Annotated[
    str,
    AfterValidator(check_spec),
    WithJsonSchema({"type": "string", "pattern": ecma(SPEC_PATTERN), "maxLength": MAX_SPEC_LENGTH}),
]
PackageName = Annotated[
    str,
    AfterValidator(check_package_name),
    WithJsonSchema({"type": "string", "pattern": ecma(NAME_PATTERN), "maxLength": MAX_SPEC_LENGTH}),
]
PipRequirement = Annotated[
    str,
    AfterValidator(check_pip_requirement),
    WithJsonSchema(
        {"type": "string", "pattern": ecma(PIP_REQUIREMENT_PATTERN), "maxLength": MAX_SPEC_LENGTH}
    ),
]
PipName = Annotated[
    str,
    AfterValidator(check_pip_name),
    WithJsonSchema({"type": "string", "pattern": ecma(PIP_NAME_PATTERN), "maxLength": MAX_SPEC_LENGTH}),
]
# A label shown in the Launcher: one line with something visible in it.
DISPLAY_NAME_PATTERN = r"^[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f][^\x00-\x1f\x7f]*$"


class ExportFormat(StrEnum):
    """What `GET environments/{name}/export` produces."""

    yaml = "yaml"
    explicit = "explicit"


class Package(ApiModel):
    name: str
    version: str
    build: str = Field(default="", description="Conda build string; empty for packages installed with pip.")
    channel: str | None = Field(
        default=None, description="Channel the conda package came from (URL or name); null for pip packages."
    )
    kind: PackageKind = Field(
        description="`conda`: a conda package record; `pypi`: installed with pip, unknown to conda."
    )


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


class PackagesRequest(ApiModel):
    model_config = ConfigDict(
        json_schema_extra={
            "anyOf": [
                {"required": [key], "properties": {key: {"minItems": 1}}}
                for key in ("add", "remove", "pip_add", "pip_remove")
            ]
        }
    )

    add: list[PackageSpec] = Field(
        default_factory=list,
        max_length=50,
        examples=[["tabulate"]],
        description="Conda match specs to install, e.g. `tensorboard`, `numpy >=1.26`, `scipy=1.13`.",
    )
    remove: list[PackageName] = Field(
        default_factory=list,
        max_length=50,
        description="Names of conda packages to remove; packages that depend on them are removed too "
        "(a dry run lists them).",
    )
    pip_add: list[PipRequirement] = Field(
        default_factory=list,
        max_length=50,
        examples=[["tabulate >=0.9"]],
        description="PyPI requirements to install with the environment's own interpreter (uv where the "
        "server has it, else the environment's pip), after the conda changes: a name with optional extras "
        "and version clauses, e.g. `tabulate`, `requests >=2.31`, `torch==2.4.*`.",
    )
    pip_remove: list[PipName] = Field(
        default_factory=list,
        max_length=50,
        description="Names of PyPI packages to uninstall (only they: pip removes no dependents).",
    )
    dry_run: bool = Field(
        default=False,
        description="Only plan: the task's result is a PackagesPlan (what would be installed, upgraded, "
        "downgraded and removed), and nothing changes.",
    )

    @model_validator(mode="after")
    def _something(self) -> PackagesRequest:
        if not (self.add or self.remove or self.pip_add or self.pip_remove):
            raise ValueError("nothing to do: give packages to add or to remove")
        return self


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


class PackagesReport(ApiModel):
    """What a package change did."""

    installed: list[str] = Field(
        description="`name-version-build` of conda packages added or changed, `name==version` of PyPI ones."
    )
    removed: list[str] = Field(
        description="`name-version-build` of conda packages removed or replaced, `name==version` of PyPI ones."
    )
    seconds: float


class PlanAction(StrEnum):
    install = "install"
    upgrade = "upgrade"
    downgrade = "downgrade"
    change = "change"  # the same version, another build
    remove = "remove"


class PlannedChange(ApiModel):
    name: str
    kind: PackageKind
    action: PlanAction
    version_before: str | None = None
    version_after: str | None = None
    download_bytes: int | None = Field(
        default=None,
        description="Bytes to download: 0 when the package cache has it; null when the installer does not "
        "say (uv and pip do not for PyPI packages from an index).",
    )
    requested: bool = Field(
        description="Named in the request. A removal that was not is a package taken along: it depends on "
        "one removed, or the solver replaced it."
    )


class PackagesPlan(ApiModel):
    """What a package change would do (`dry_run: true`); nothing was changed."""

    environment: str
    changes: list[PlannedChange]
    download_bytes: int = Field(description="The sum of the known download sizes.")
    unrequested_removals: list[str] = Field(
        description="Packages the change would remove that the request did not name: confirm them first."
    )
    runs_notebooks: bool = Field(
        description="Whether the environment still has ipykernel after the change (it can run notebooks)."
    )
    warnings: list[str] = Field(default_factory=list, description="Sentences to show before applying.")


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


class HistoryEntry(ApiModel):
    """One change an environment holds (`packages`), an undo (`undo`), or how it was made (`create`)."""

    id: str = Field(description="The change's id: the task that made it.")
    at: float = Field(description="When it was applied (seconds since the epoch).")
    kind: Literal["packages", "undo", "create"]
    summary: str = Field(description="The change in one line, e.g. `+tabulate −jedi +pip:requests`.")
    installed: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)


class EnvironmentHistory(ApiModel):
    """The changes an environment holds, newest first, and what "undo" would do now."""

    environment: str
    changes: list[HistoryEntry]
    undo: str | None = Field(
        description="What `POST environments/{name}/undo` would restore, in one sentence; null when no "
        "previous state is kept (no change yet, or it was deleted)."
    )


class UndoResult(ApiModel):
    """The result of an undo task."""

    environment: Environment
    restored: str = Field(description="What was restored, in one sentence.")


class FoundPackage(ApiModel):
    name: str
    kind: PackageKind
    versions: list[str] = Field(description="Newest first, at most 8.")


class PackageSearch(ApiModel):
    """Packages that exist: conda packages of the configured channels whose name holds the query, or the
    PyPI package of exactly that name on the configured index."""

    query: str
    kind: PackageKind
    packages: list[FoundPackage]
    total: int = Field(description="How many names match; `packages` holds the best of them.")
