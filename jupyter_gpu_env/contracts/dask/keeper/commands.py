"""The keeper's one way to run a batch-system command (sbatch, squeue, scancel): asyncio, an argv list,
a timeout, the command's error output in the exception. The package's own seam (``jupyter_gpu_env.proc``)
is not there where the keeper runs."""

from __future__ import annotations

import asyncio
import subprocess


async def run(
    argv: list[str],
    timeout: float = 30.0,  # noqa: ASYNC109 - asyncio.timeout is 3.11+; environments may be older
    env: dict[str, str] | None = None,
) -> str:
    """A batch-system command's standard output; its error output in the exception when it fails.
    ``env``: the command's whole environment (None: the keeper's)."""
    p = await asyncio.create_subprocess_exec(
        *argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    try:
        out, err = await asyncio.wait_for(p.communicate(), timeout)
    except asyncio.TimeoutError:  # noqa: UP041 - not the builtin TimeoutError before Python 3.11
        p.kill()
        await p.wait()
        raise RuntimeError(f"{argv[0]} did not answer within {timeout:.0f} s") from None
    if p.returncode != 0:
        raise RuntimeError(
            f"{' '.join(argv[:2])} failed ({p.returncode}): {err.decode(errors='replace').strip()}"
        )
    return out.decode(errors="replace")
