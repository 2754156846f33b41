"""Run the packer (conda-pack's plan, then mksquashfs) and apptainer for SIF through the subprocess seam,
with progress and clear failures."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import resource
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from .. import proc
from ..envs.building import disk_full
from ..envs.catalog.prefix import disk_usage
from ..errors import CommandFailed, Conflict, DiskFull, GpuEnvError, Unavailable
from ..system.spare import SpareProcess
from . import runtime

Progress = Callable[[float, str], None]


class PackFailed(GpuEnvError):
    status = 507
    reason = "pack_failed"


def _explain(err: CommandFailed, out_dir: Path, max_bytes: int | None) -> GpuEnvError:
    """Turn a tool's failure into a sentence the user can act on (a full disk: :func:`_disk_full`)."""
    text = err.output
    if err.returncode in (-25, 128 + 25) or "File too large" in text or "SIGXFSZ" in text:
        limit = f" of {max_bytes / (1 << 30):.1f} GiB" if max_bytes else ""
        return PackFailed(
            f"The image grew past the size limit{limit} set for images on this server. Remove packages "
            "you do not need from the environment, or ask your administrator to raise "
            "c.GpuEnvApp.image_max_bytes.",
            reason="too_large",
        )
    if "Permission denied" in text or f"[Errno {errno.EACCES}]" in text:
        return PackFailed(
            f"Permission denied while writing the image to {out_dir}. Ask your administrator to make "
            "c.GpuEnvApp.image_dir writable for you, or point it at a folder you own.",
            reason="permission_denied",
        )
    tail = text.strip().splitlines()[-3:]
    return PackFailed("Packing failed: " + " ".join(tail) if tail else str(err))


# Less free than this where the image goes, and a failed pack is the full disk's doing, whatever the
# tool made of it: no image fits there (conda-pack, reading a package cache that the full disk left
# half written, says a package's info/files is missing).
_FULL_BELOW = 1 << 20
_FULL_WORDS = ("No space left on device", f"[Errno {errno.ENOSPC}]", "Disk quota exceeded")


def _disk_full(text: str, out_dir: Path, needs: int | None, said: str = "") -> DiskFull | None:
    """The full disk in words, with what the image needs (``needs`` bytes at most) and what is free,
    when the tool said the disk was full or it is full now; None otherwise. ``said``: what the tool
    made of it, kept after."""
    try:
        free: int | None = shutil.disk_usage(out_dir).free
    except OSError:
        free = None
    if not any(w in text for w in _FULL_WORDS) and (free is None or free >= _FULL_BELOW):
        return None
    size = (
        f"up to about {round(needs / 1e6)} MB (the environment's size, before compression)" if needs else ""
    )
    full = disk_full("the image", out_dir, needs=size, free=free)
    return DiskFull(f"{full.message} ({said})" if said else full.message)


def packers(max_bytes: int | None = None) -> SpareProcess:
    """Packer processes, each with the image size limit (RLIMIT_FSIZE, inherited by mksquashfs)."""
    return SpareProcess(
        [sys.executable, "-m", "jupyter_gpu_env.images.packer"],
        "image packer",
        env=proc.own_package_env(),
        rlimits={resource.RLIMIT_FSIZE: (max_bytes, max_bytes)} if max_bytes else None,
        nice=proc.BACKGROUND,
    )


async def squashfs_image(
    prefix: Path,
    output: Path,
    dest_prefix: str,
    compression: str,
    progress: Progress,
    *,
    staging: Path,
    max_bytes: int | None = None,
    threads: int | None = None,
    processes: SpareProcess | None = None,
) -> None:
    """Pack ``prefix`` into a squashfs at ``output`` whose files expect to live at ``dest_prefix``.

    conda-pack plans, mksquashfs compresses the environment in place (see squash.py); ``staging`` holds
    the few rewritten files and must be removed by the caller. ``processes``: from :func:`packers` with
    the same ``max_bytes`` (a server's keeps one ready); by default a packer is started for this pack.
    """
    if shutil.which("mksquashfs") is None:
        raise Unavailable(
            "mksquashfs is not installed on this server, so squashfs images cannot be built. "
            "Ask your administrator to install squashfs-tools.",
            reason="tool_missing",
        )
    request = {
        "prefix": str(prefix),
        "dest_prefix": dest_prefix,
        "output": str(output),
        "staging": str(staging),
        "compression": compression,
        "processors": threads or os.cpu_count() or 1,
    }
    refused: list[str] = []

    def on_stdout(line: str) -> None:
        try:
            msg = json.loads(line)
        except ValueError:
            return
        if not isinstance(msg, dict):
            return
        if "progress" in msg:
            progress(0.05 + 0.1 * float(msg["progress"]), str(msg.get("message", "")))
        if "error" in msg:
            refused.append(str(msg["error"]))

    processes = processes or packers(max_bytes)
    progress(0.02, "Reading the environment with conda-pack")
    try:
        packer = await processes.take()
        try:
            await packer.finish(stdin=json.dumps(request).encode(), on_stdout=on_stdout)
        finally:
            processes.replenish()
    except CommandFailed as e:
        said = refused[-1] if refused else ""
        needs = await asyncio.to_thread(lambda: disk_usage(prefix)[0])
        full = await asyncio.to_thread(_disk_full, e.output, output.parent, needs, said)
        if full is not None:
            raise full from e
        if refused:  # the environment, not the server: conda-pack says what to fix
            raise Conflict(said, reason="not_packable") from e
        raise _explain(e, output.parent, max_bytes) from e
    except OSError as e:
        full = await asyncio.to_thread(_disk_full, str(e), output.parent, None)
        raise full or PackFailed(f"Could not start the packer: {e}") from e


def sif_definition(squashfs_path: Path, dest_prefix: str, base_image: str) -> str:
    """An apptainer definition that copies the unpacked environment into a base image at ``dest_prefix``."""
    return "\n".join(
        [
            f"Bootstrap: {'localimage' if base_image.endswith('.sif') else 'docker'}",
            f"From: {base_image.removeprefix('docker://')}",
            "",
            "%setup",
            f'    mkdir -p "${{APPTAINER_ROOTFS}}{dest_prefix}"',
            f'    unsquashfs -f -d "${{APPTAINER_ROOTFS}}{dest_prefix}" "{squashfs_path}"',
            "",
            "%environment",
            f'    export PATH="{dest_prefix}/bin:$PATH"',
            f'    export CONDA_PREFIX="{dest_prefix}"',
            "",
            "%runscript",
            f'    exec "{dest_prefix}/bin/python" "$@"',
            "",
        ]
    )


async def build_sif(
    squashfs_path: Path, output: Path, dest_prefix: str, base_image: str, progress: Progress
) -> None:
    tool = runtime.apptainer()
    if tool is None:
        raise Conflict(
            "SIF images need apptainer (or singularity), which is not installed on this server. Use the "
            "squashfs image instead: apptainer on your cluster runs it with "
            "--bind IMAGE:MOUNT:image-src=/ (see the image's usage lines).",
            reason="tool_missing",
        )
    definition = output.with_suffix(".def")
    definition.write_text(sif_definition(squashfs_path, dest_prefix, base_image))
    progress(0.8, f"Building the SIF with {Path(tool).name}")
    try:
        await proc.run([tool, "build", "--force", str(output), str(definition)])
    except CommandFailed as e:
        full = await asyncio.to_thread(_disk_full, e.output, output.parent, None)
        raise full or _explain(e, output.parent, None) from e
    finally:
        definition.unlink(missing_ok=True)


_versions: dict[str, str] | None = None


async def tool_versions() -> dict[str, str]:
    """The versions of the packing tools, asked once per process (an upgrade comes with a restart)."""
    global _versions
    if _versions is None:
        _versions = await _ask_versions()
    return dict(_versions)


async def _ask_versions() -> dict[str, str]:
    versions: dict[str, str] = {}
    try:
        import conda_pack

        versions["conda-pack"] = conda_pack.__version__
    except ImportError:
        pass
    if shutil.which("mksquashfs"):
        r = await proc.run(["mksquashfs", "-version"], check=False, timeout=10)
        first = (r.stdout or r.stderr).splitlines()[:1]
        if first:
            versions["mksquashfs"] = first[0].strip()
    tool = runtime.apptainer()
    if tool:
        r = await proc.run([tool, "--version"], check=False, timeout=10)
        versions[Path(tool).name] = r.stdout.strip()
    return versions
