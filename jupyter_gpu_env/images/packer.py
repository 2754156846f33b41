"""The pack process: plan with conda-pack, then become mksquashfs.

Run as ``python -m jupyter_gpu_env.images.packer`` with a JSON request on stdin (prefix, dest_prefix,
output, staging, compression, processors). It prints JSON lines ({"progress", "message"} or {"error"}),
writes the pseudo and exclude files into ``staging``, and execs mksquashfs: one process to kill on
cancel, and the size limit (RLIMIT_FSIZE) set on it holds for mksquashfs too.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from .squash import UnpackableName, mksquashfs_argv, plan, pseudo_lines


def _say(**message: object) -> None:
    print(json.dumps(message), flush=True)


def main() -> int:
    request = json.load(sys.stdin)
    prefix, staging = Path(request["prefix"]), Path(request["staging"])

    def tick(fraction: float, message: str) -> None:
        _say(progress=fraction, message=message)

    try:
        from conda_pack import CondaPackException
    except ImportError:
        _say(error="conda-pack is not installed on this server; ask your administrator to install it.")
        return 1
    try:
        decided = plan(prefix, request["dest_prefix"], staging, tick)
    except (CondaPackException, UnpackableName) as e:
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
    )
    sys.stdout.flush()
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    sys.exit(main())
