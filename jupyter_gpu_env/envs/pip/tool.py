"""Which installer changes an environment's PyPI packages, and its command lines.

uv is much faster than pip (it resolves in Rust and links from its own cache); it is a dependency of this
package, so it is normally there. Without it the environment's own pip runs, which must then be installed
in the environment. Both run against the environment's interpreter, so the packages fit its Python.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import Conflict


@dataclass(frozen=True)
class PipSettings:
    """A site's choices: the installer (``auto``, ``uv``, ``pip``) and where packages come from."""

    installer: str = "auto"
    index_url: str = ""  # empty: the installer's own default (and its configuration file)
    extra_index_urls: tuple[str, ...] = field(default_factory=tuple)
    find_links: tuple[str, ...] = field(default_factory=tuple)  # folders or pages of wheels
    no_index: bool = False  # only find_links (an offline wheelhouse)


def uv_binary() -> str | None:
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


@dataclass(frozen=True)
class Installer:
    name: str  # "uv" or "pip"
    python: Path  # the environment's interpreter
    settings: PipSettings
    uv: str | None = None

    def _sources(self) -> list[str]:
        s = self.settings
        argv = ["--index-url", s.index_url] if s.index_url else []
        for url in s.extra_index_urls:
            argv += ["--extra-index-url", url]
        for where in s.find_links:
            argv += ["--find-links", where]
        return argv + (["--no-index"] if s.no_index else [])

    def install(self, requirements: list[str], *, dry_run: bool = False) -> list[str]:
        if self.name == "uv":
            argv = [str(self.uv), "pip", "install", "--python", str(self.python), "--no-progress"]
            argv += ["--dry-run"] if dry_run else []
        else:
            argv = [str(self.python), "-m", "pip", "install", "--no-input", "--disable-pip-version-check"]
            argv += ["--dry-run", "--quiet", "--report", "-"] if dry_run else ["--progress-bar", "off"]
        return [*argv, *self._sources(), "--", *requirements]

    def compile(self, python_version: str) -> list[str]:
        """uv's resolution of requirements (read from stdin) for a Python that does not exist yet."""
        argv = [str(self.uv), "pip", "compile", "--python-version", python_version, "--no-header"]
        return [*argv, "--no-annotate", "--quiet", "--no-progress", *self._sources(), "-"]

    def uninstall(self, names: list[str]) -> list[str]:
        if self.name == "uv":
            return [str(self.uv), "pip", "uninstall", "--python", str(self.python), "--", *names]
        return [
            str(self.python),
            "-m",
            "pip",
            "uninstall",
            "--yes",
            "--disable-pip-version-check",
            "--",
            *names,
        ]


def installer_for(prefix: Path, settings: PipSettings) -> Installer:
    """The installer for ``prefix``; Conflict when none can run there, saying what to add."""
    python = prefix / "bin" / "python"
    if not python.exists():
        raise Conflict(
            f"The environment at {prefix} has no Python, so PyPI packages cannot be installed in it. "
            "Add the conda package `python` first.",
            reason="no_python",
        )
    uv = uv_binary() if settings.installer in ("auto", "uv") else None
    if uv is not None:
        return Installer("uv", python, settings, uv)
    if settings.installer == "uv":
        raise Conflict(
            "This server is set to install PyPI packages with uv (c.GpuEnvApp.pip_installer), but uv "
            "is not installed; ask your administrator to `pip install uv` beside the server.",
            reason="tool_missing",
        )
    if not any((prefix / "lib").glob("python3*/site-packages/pip/__init__.py")):
        raise Conflict(
            "The environment has no pip and the server has no uv, so PyPI packages cannot be installed; "
            "add the conda package `pip` first.",
            reason="tool_missing",
        )
    return Installer("pip", python, settings)
