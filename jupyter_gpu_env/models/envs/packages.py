"""Models of an environment's packages: what is installed, a change asked for, its plan, its result, the
history of changes and undo, and package search."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import AfterValidator, ConfigDict, Field, WithJsonSchema, model_validator

from ..common import ApiModel
from ..fields import ecma
from .syntax import (
    MAX_SPEC_LENGTH,
    NAME_PATTERN,
    PIP_NAME_PATTERN,
    PIP_REQUIREMENT_PATTERN,
    SPEC_PATTERN,
    check_package_name,
    check_pip_name,
    check_pip_requirement,
    check_spec,
)

PackageKind = Literal["conda", "pypi"]

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
