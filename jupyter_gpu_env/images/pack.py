"""Run conda-pack (and apptainer for SIF) through the subprocess seam, with progress and clear failures."""

from __future__ import annotations

import errno
import os
import re
import resource
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from .. import proc
from ..errors import CommandFailed, Conflict, GpuEnvError, Unavailable
from . import runtime

Progress = Callable[[float, str], None]

_BAR = re.compile(r"(\d{1,3})% Completed")
# conda-pack's compress_level: 0 none, 9 xz, anything else zstd at level int(level / 8 * 20).
_LEVELS = {"none": 0, "xz": 9, "zstd": 4}


class PackFailed(GpuEnvError):
    status = 507
    reason = "pack_failed"


def _explain(err: CommandFailed, out_dir: Path, max_bytes: int | None) -> GpuEnvError:
    """Turn a tool's failure into a sentence the user can act on."""
    text = err.output
    if err.returncode in (-25, 128 + 25) or "File too large" in text or "SIGXFSZ" in text:
        limit = f" of {max_bytes / (1 << 30):.1f} GiB" if max_bytes else ""
        return PackFailed(
            f"The image grew past the size limit{limit} set for images on this server. Remove packages "
            "you do not need from the environment, or ask your administrator to raise "
            "c.GpuEnvApp.image_max_bytes.",
            reason="too_large",
        )
    if "No space left" in text or f"[Errno {errno.ENOSPC}]" in text:
        return PackFailed(
            f"The disk holding {out_dir} is full, so the image could not be written. Delete old images "
            "(Images list → delete) or free space, then pack again.",
            reason="disk_full",
        )
    if "Permission denied" in text or f"[Errno {errno.EACCES}]" in text:
        return PackFailed(
            f"Permission denied while writing the image to {out_dir}. Ask your administrator to make "
            "c.GpuEnvApp.image_dir writable for you, or point it at a folder you own.",
            reason="permission_denied",
        )
    tail = text.strip().splitlines()[-3:]
    return PackFailed("Packing failed: " + " ".join(tail) if tail else str(err))


async def conda_pack_squashfs(
    prefix: Path,
    output: Path,
    dest_prefix: str,
    compression: str,
    progress: Progress,
    *,
    max_bytes: int | None = None,
    threads: int | None = None,
    staging: Path | None = None,
) -> None:
    """Pack ``prefix`` into a squashfs at ``output`` whose files expect to live at ``dest_prefix``."""
    if shutil.which("mksquashfs") is None:
        raise Unavailable(
            "mksquashfs is not installed on this server, so squashfs images cannot be built. "
            "Ask your administrator to install squashfs-tools.",
            reason="tool_missing",
        )
    argv = [
        sys.executable, "-c", "import sys; from conda_pack.cli import main; sys.exit(main())",
        "--prefix", str(prefix),
        "--output", str(output),
        "--format", "squashfs",
        "--dest-prefix", dest_prefix,
        "--compress-level", str(_LEVELS[compression]),
        "--n-threads", str(threads or -1),
        "--force",
    ]  # fmt: skip

    def on_line(line: str) -> None:
        m = _BAR.search(line)
        if m:
            progress(0.05 + 0.5 * int(m.group(1)) / 100, "Collecting files")
        elif line.startswith("Packing environment"):
            progress(0.05, "Collecting files")
        elif "mksquashfs" in line.lower() or "Creating" in line:
            progress(0.6, "Compressing into one squashfs file")

    # conda-pack stages hardlinks in a temporary folder; keeping it beside the output (not in /tmp)
    # keeps them on one filesystem, so they cost no copies, and lets the caller remove it if killed.
    env = {**os.environ, "TMPDIR": str(staging or output.parent)}
    limits = {resource.RLIMIT_FSIZE: (max_bytes, max_bytes)} if max_bytes else None
    progress(0.02, "Starting conda-pack")
    try:
        await proc.run(
            argv, env=env, on_stdout=on_line, on_stderr=on_line, rlimits=limits, nice=proc.BACKGROUND
        )
    except CommandFailed as e:
        raise _explain(e, output.parent, max_bytes) from e
    except OSError as e:
        raise PackFailed(f"Could not start conda-pack: {e}") from e


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
        raise _explain(e, output.parent, None) from e
    finally:
        definition.unlink(missing_ok=True)


async def tool_versions() -> dict[str, str]:
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
