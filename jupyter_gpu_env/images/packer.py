"""The pack process: plan with conda-pack, then become mksquashfs.

Run as ``python -m jupyter_gpu_env.images.packer`` with a JSON request on stdin (prefix, dest_prefix,
output, staging, compression, processors). It prints JSON lines ({"progress", "message"} or {"error"}),
writes the pseudo and exclude files into ``staging``, and execs mksquashfs: one process to kill on
cancel, and the size limit (RLIMIT_FSIZE) set on it holds for mksquashfs too. A server starts one ahead
of need (see :mod:`jupyter_gpu_env.system.spare`): it imports conda-pack, then waits for its request.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from ..system.spare import read_request
from .squash import UnpackableName, mksquashfs_argv, plan, pseudo_lines, zstd_level


def _say(**message: object) -> None:
    print(json.dumps(message), flush=True)


def _load_conda_pack() -> type[Exception] | None:
    """conda-pack's error class, loaded before the request comes; None when it is not installed."""
    try:
        import conda_pack.core  # noqa: F401
        from conda_pack import CondaPackException
    except ImportError:
        return None
    error: type[Exception] = CondaPackException
    return error


def main() -> int:
    conda_pack_error = _load_conda_pack()
    raw = read_request()
    if raw is None:
        return 0
    if conda_pack_error is None:
        _say(error="conda-pack is not installed on this server; ask your administrator to install it.")
        return 1
    request = json.loads(raw)
    prefix, staging = Path(request["prefix"]), Path(request["staging"])

    def tick(fraction: float, message: str) -> None:
        _say(progress=fraction, message=message)

    try:
        decided = plan(prefix, request["dest_prefix"], staging, tick, fork=True)
    except (conda_pack_error, UnpackableName) as e:
        _say(error=f"conda-pack cannot pack this environment: {e}")
        return 1
    except FileNotFoundError as e:  # a package's files gone from the package cache
        _say(error=f"conda-pack cannot pack this environment: {e.filename} is missing ({e.strerror}).")
        return 1
    pseudo = staging / "pseudo"
    pseudo.write_text("".join(line + "\n" for line in pseudo_lines(decided.rewritten)))
    excludes = staging / "exclude"
    excludes.write_text("".join(name + "\n" for name in decided.excluded))
    _say(
        progress=1.0,
        message=f"{decided.files} files, {len(decided.rewritten)} rewritten for {request['dest_prefix']}",
    )
    argv = mksquashfs_argv(
        prefix,
        Path(request["output"]),
        compression=request["compression"],
        processors=int(request["processors"]),
        pseudo_file=pseudo,
        exclude_file=excludes,
        level=zstd_level(decided.size_bytes),
    )
    sys.stdout.flush()
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    sys.exit(main())
