"""Writing environments so that nothing half-done is ever visible, whatever makes them (a clone, a file,
a publish, a package change).

A new environment is built in a hidden sibling ``.<name>.partial-<hex>`` and renamed into place when
complete; a changed one is a transaction (:mod:`.transaction`): built in ``.<name>.txn-<hex>`` and
swapped in whole. Cancelling, failing or a full disk leave nothing behind, and a full disk is said in
words, with what the copy takes and what is free; the clean-up never hides the failure it follows. The
caller holds the environment's claim (:mod:`.changing`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from ..errors import Conflict, DiskFull
from ..system.trees import remove_tree
from . import conda_list, transaction
from .catalog import EnvironmentCatalog, EnvLocation
from .catalog.prefix import disk_usage
from .changes import history
from .claims import working_on
from .engine import ProgressFn
from .transaction import is_disk_full

log = logging.getLogger(__name__)
T = TypeVar("T")


def _mb(n: int) -> str:
    return f"{round(n / 1e6)} MB"


def disk_full(what: str, where: Path, *, needs: str = "", free: int | None = None) -> DiskFull:
    """The full disk in words: ``needs`` (what ``what`` takes, a sentence's end) and ``free`` (bytes)."""
    sizes = ""
    if needs and free is not None:
        sizes = f"It needs {needs}, and {_mb(free)} {'is' if round(free / 1e6) == 1 else 'are'} free. "
    elif free is not None:
        sizes = f"{_mb(free)} {'is' if round(free / 1e6) == 1 else 'are'} free. "
    return DiskFull(
        f"The disk holding {where} is full, so {what} could not be written; nothing was kept. {sizes}Delete "
        "environments or images you no longer need (or ask your administrator for more space), then try "
        "again."
    )


def _sizes(where: Path, source: EnvLocation | None) -> tuple[str, int | None]:
    """What a copy of ``source`` takes at most (its size on disk) and what is free where it goes."""
    needs = ""
    if source is not None:
        needs = f"up to about {_mb(disk_usage(source.prefix)[0])} (the size of '{source.name}')"
    try:
        free: int | None = shutil.disk_usage(where).free
    except OSError:
        free = None
    return needs, free


def _clean_up(build: Path) -> None:
    """Remove a build that failed; what cannot be removed is logged, never raised over the failure."""
    if not remove_tree(build):
        log.error("could not remove all of %s, left by a failed build", build)


def _publish(build: Path, final: Path) -> None:
    if final.exists() or final.is_symlink():
        raise Conflict(f"An environment named '{final.name}' appeared meanwhile.", reason="env_exists")
    try:
        os.rename(build, final)
    except OSError as e:
        raise Conflict(f"Could not move the new environment into place: {e}", reason="env_exists") from e


class Builder:
    """Builds environments aside and puts them in place; tells the catalog and conda's list."""

    def __init__(self, catalog: EnvironmentCatalog, conda_list_path: Path) -> None:
        self.catalog = catalog
        self.conda_list_path = conda_list_path

    async def make(
        self,
        final: Path,
        fill: Callable[[Path], Awaitable[T]],
        what: str,
        *,
        source: EnvLocation | None = None,
    ) -> T:
        """Build a new environment in a hidden sibling of ``final`` with ``fill`` and rename it into
        place. ``source``: the environment it copies, whose size a full disk's message gives."""
        parent = final.parent
        await asyncio.to_thread(parent.mkdir, parents=True, exist_ok=True)
        build = parent / f".{final.name}.partial-{secrets.token_hex(4)}"
        async with working_on(build):  # so that no other server's start sweeps it meanwhile
            try:
                await asyncio.to_thread(build.mkdir)
                result = await fill(build)
                await asyncio.to_thread(history.new_identity, build)  # what its kept states belong to
                await asyncio.to_thread(_publish, build, final)
            except BaseException as e:
                await asyncio.shield(asyncio.to_thread(_clean_up, build))
                if is_disk_full(e):
                    needs, free = await asyncio.to_thread(_sizes, parent, source)
                    raise disk_full(what, parent, needs=needs, free=free) from e
                raise
        return result

    async def change(
        self, prefix: Path, apply: Callable[[Path], Awaitable[T]], *, progress: ProgressFn | None = None
    ) -> T:
        """Change a copy of ``prefix`` with ``apply`` and swap it in (:func:`.transaction.run`)."""
        try:
            return await transaction.run(
                prefix,
                apply,
                progress=progress,
                disk_full=lambda: disk_full("the changed environment", self.catalog.user_env_dir),
            )
        finally:
            self.catalog.refresh(prefix)

    async def record(self, prefix: Path) -> None:
        """A new environment of the user's is complete: in conda's list (for ``conda activate``) and the
        catalog."""
        try:
            await asyncio.to_thread(conda_list.add, self.conda_list_path, prefix)
        except OSError as e:  # conda's list is a convenience; the environment itself is complete
            log.warning("could not record %s in %s: %s", prefix, self.conda_list_path, e)
        self.catalog.refresh(prefix)
