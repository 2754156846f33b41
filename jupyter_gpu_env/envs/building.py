"""Writing environments so that nothing half-done is ever visible, whatever makes them (a clone, a file,
a publish, a package change).

A new environment is built in a hidden sibling ``.<name>.partial-<hex>`` and renamed into place when
complete; a changed one is a transaction (:mod:`.transaction`): built in ``.<name>.txn-<hex>`` and
swapped in whole. Cancelling, failing or a full disk leave nothing behind. The caller holds the
environment's claim (:mod:`.changing`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from ..errors import Conflict, DiskFull
from . import conda_list, transaction
from .catalog import EnvironmentCatalog
from .changes import history
from .claims import working_on
from .engine import ProgressFn
from .transaction import is_disk_full, remove_tree

log = logging.getLogger(__name__)
T = TypeVar("T")


def disk_full(what: str, where: Path) -> DiskFull:
    return DiskFull(
        f"The disk holding {where} is full, so {what} could not be written; nothing was kept. Delete "
        "environments or images you no longer need (or ask your administrator for more space), then try "
        "again."
    )


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

    async def make(self, final: Path, fill: Callable[[Path], Awaitable[T]], what: str) -> T:
        """Build a new environment in a hidden sibling of ``final`` with ``fill`` and rename it into
        place."""
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
                await asyncio.shield(asyncio.to_thread(remove_tree, build))
                if is_disk_full(e):
                    raise disk_full(what, parent) from e
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
