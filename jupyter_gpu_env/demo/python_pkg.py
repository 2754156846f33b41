"""A conda ``python`` package made from the CPython this process runs on.

The interpreter's prefix is copied in conda's layout (``bin/pythonX.Y``, ``lib/libpythonX.Y.so*``,
``lib/pythonX.Y``, ``include``), leaving out the test suite, IDLE, tkinter, bytecode caches and the
static library. Builds such as pyenv's bake an absolute RUNPATH into the executable and extension
modules; those are reset to ``$ORIGIN``-relative paths with patchelf so that the environment is
relocatable (conda-pack, squashfs images). Text files that hold the old prefix (scripts,
sysconfigdata, Makefile, pkg-config) are declared with it as prefix placeholder.
"""

from __future__ import annotations

import platform
import shutil
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from ..envs.export import conda_subdir
from ..errors import Conflict

_SKIP_STDLIB = {"site-packages", "test", "idlelib", "tkinter", "turtledemo", "lib2to3", "__pycache__"}


@dataclass(frozen=True)
class PythonSource:
    prefix: Path
    version: str  # 3.11.7
    short: str  # 3.11

    @property
    def stdlib(self) -> Path:
        return self.prefix / "lib" / f"python{self.short}"


def current_python(prefix: Path | None = None) -> PythonSource:
    """This interpreter's installation; Conflict when its layout cannot be packaged."""
    base = Path(prefix or sys.base_prefix)
    v = sys.version_info
    short = f"{v.major}.{v.minor}"
    src = PythonSource(base, f"{v.major}.{v.minor}.{v.micro}", short)
    if not (base / "bin" / f"python{short}").is_file() or not (src.stdlib / "os.py").is_file():
        raise Conflict(
            f"The Python at {base} does not have the layout this builder packages "
            f"(bin/python{short} and lib/python{short}/os.py under one prefix, as pyenv, python.org or "
            "python-build-standalone builds have). Run the builder with such a Python.",
            reason="unsupported_python",
        )
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        raise Conflict(
            "Free-threaded Python builds are not supported by the demo builder.", reason="unsupported_python"
        )
    return src


def stage(src: PythonSource, stage_dir: Path) -> dict[str, list[Path]]:
    """Copy the interpreter into ``stage_dir``; returns the ELF files to patch, by new RUNPATH."""

    def ignore(folder: str, names: list[str]) -> set[str]:
        out = {n for n in names if n == "__pycache__"}
        if Path(folder) == src.stdlib:
            out |= _SKIP_STDLIB & set(names)
        if Path(folder).name.startswith("config-"):
            out |= {n for n in names if n.endswith(".a")}
        return out

    lib = stage_dir / "lib"
    shutil.copytree(src.stdlib, lib / f"python{src.short}", symlinks=True, ignore=ignore)
    for item in sorted((src.prefix / "lib").glob("libpython*")):
        shutil.copy2(item, lib / item.name, follow_symlinks=False)
    if (src.prefix / "lib" / "pkgconfig").is_dir():
        shutil.copytree(src.prefix / "lib" / "pkgconfig", lib / "pkgconfig", symlinks=True)
    include = src.prefix / "include" / f"python{src.short}"
    if include.is_dir():
        shutil.copytree(include, stage_dir / "include" / include.name, symlinks=True)
    (stage_dir / "bin").mkdir()
    for name in (
        "python",
        "python3",
        f"python{src.short}",
        "python3-config",
        f"python{src.short}-config",
        "pydoc3",
        f"pydoc{src.short}",
    ):
        item = src.prefix / "bin" / name
        if item.is_file() or item.is_symlink():
            shutil.copy2(item, stage_dir / "bin" / name, follow_symlinks=False)
    if not (stage_dir / "bin" / "python").exists():
        (stage_dir / "bin" / "python").symlink_to(f"python{src.short}")

    def elf(paths: list[Path]) -> list[Path]:
        out = []
        for p in paths:
            if p.is_file() and not p.is_symlink():
                with open(p, "rb") as f:
                    if f.read(4) == b"\x7fELF":
                        out.append(p)
        return out

    return {
        "$ORIGIN/../lib": elf([stage_dir / "bin" / f"python{src.short}"]),
        "$ORIGIN": elf(sorted(lib.glob("libpython*"))),
        "$ORIGIN/../..": elf(sorted((lib / f"python{src.short}" / "lib-dynload").glob("*.so"))),
    }


def index_json(src: PythonSource, timestamp: int) -> dict[str, object]:
    subdir = conda_subdir()
    return {
        "name": "python",
        "version": src.version,
        "build": "h_local_0",
        "build_number": 0,
        "depends": [],
        "subdir": subdir,
        "platform": subdir.split("-")[0],
        "arch": platform.machine(),
        "license": "PSF-2.0",
        "timestamp": timestamp,
    }
