"""Environments shared with a team: published into a group-writable folder, read-only for everyone but
their owner, listed under "Shared" and cloneable like managed ones; only their owner unpublishes them.

A published environment is a clone of the user's (the engine's clone, so it runs at its shared prefix),
built aside in the shared folder and renamed into place once complete. Who published it is the
owner of its folder there, as the filesystem says (never a file its publisher could edit); what for is
kept in its origin file. The folder itself is the site's to set up: group-owned, setgid and sticky
(``chmod 3775``), so teammates can add entries but only an entry's owner can rename or remove it. We
take group and other write off every file and folder we publish, so no teammate can change it, and
give group and others no more than the user's own environment gives them: a private file stays private.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import stat
from pathlib import Path

from ..errors import Conflict, Forbidden
from ..models.envs.syntax import validate_env_name
from ..system.trees import remove_tree
from .building import Builder
from .catalog import EnvironmentCatalog, EnvLocation
from .catalog.prefix import owner_uid, user_name, write_origin
from .changing import Change, Claiming, EnvironmentClaims
from .engine import CondaEngine, Reporter, part

_WRITE_OTHERS = stat.S_IWGRP | stat.S_IWOTH
_OTHERS = stat.S_IRWXG | stat.S_IRWXO


def published_mode(mode: int, source_mode: int | None) -> int:
    """A published entry's permission bits: no write for the team, and for group and others no more
    than its source gives them (a 0600 token stays 0600); the owner's bits as they are."""
    mode = stat.S_IMODE(mode) & ~_WRITE_OTHERS
    if source_mode is not None:
        mode &= ~(_OTHERS & ~source_mode)
    return mode


def make_read_only_for_others(prefix: Path, source: Path) -> None:
    """Everything under ``prefix`` (a copy of ``source``) writable by its owner only, and no more open
    to group and others than the same entry of ``source`` is (links as they are)."""
    for root, dirs, files in os.walk(prefix):
        for name in [*dirs, *files]:
            path = os.path.join(root, name)
            _limit(path, os.path.join(source, os.path.relpath(path, prefix)))
    _limit(str(prefix), str(source))


def _limit(path: str, source: str) -> None:
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        return
    try:
        src = os.lstat(source)
    except FileNotFoundError:
        src = None  # written by the clone itself
    mode = published_mode(st.st_mode, None if src is None or stat.S_ISLNK(src.st_mode) else src.st_mode)
    if mode != stat.S_IMODE(st.st_mode):
        os.chmod(path, mode)


def publish_dir(shared_dirs: list[Path]) -> Path:
    """The folder to publish into: the first configured one. Forbidden when none is configured,
    Conflict when it cannot be written, each saying whom to ask."""
    if not shared_dirs:
        raise Forbidden(
            "This server has no folder to share environments in; ask your administrator to set "
            "c.GpuEnvApp.shared_env_dirs to a folder your team can write.",
            reason="sharing_disabled",
        )
    target = shared_dirs[0]
    if not target.is_dir() or not os.access(target, os.W_OK | os.X_OK):
        raise Conflict(
            f"The shared folder {target} does not exist or you cannot write to it; ask your administrator "
            "to create it group-writable for your team (chmod 3775).",
            reason="sharing_unavailable",
        )
    return target


def check_owner(entry: Path, name: str) -> None:
    """Forbidden unless this user owns ``entry`` itself (a link's own owner, never its target's)."""
    uid = os.lstat(entry).st_uid
    if uid != os.getuid():
        raise Forbidden(
            f"'{name}' was shared by {user_name(uid)}; only they can unpublish it. Clone it "
            "to keep a copy of your own.",
            reason="not_owner",
        )


def take_down(entry: Path, name: str) -> Path:
    """Rename the shared ``entry`` (this user's: Forbidden otherwise) out of the listing, as it is: a
    link is moved as a link. Returns where it went, for :func:`.transaction.remove_tree` (blocking)."""
    folder = os.open(entry.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        before = os.stat(entry.name, dir_fd=folder, follow_symlinks=False)
        check_owner(entry, name)
        trash = f".{entry.name}.deleting-{secrets.token_hex(4)}"
        os.rename(entry.name, trash, src_dir_fd=folder, dst_dir_fd=folder)
        after = os.stat(trash, dir_fd=folder, follow_symlinks=False)
        if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino):  # swapped meanwhile: put back
            os.rename(trash, entry.name, src_dir_fd=folder, dst_dir_fd=folder)
            raise Conflict(f"'{name}' changed while it was being unpublished; try again.", reason="busy")
    finally:
        os.close(folder)
    return entry.parent / trash


class SharedEnvironments:
    """Publishing and unpublishing; listing is the catalog's (``shared_dirs``)."""

    def __init__(
        self, catalog: EnvironmentCatalog, engine: CondaEngine, builder: Builder, claims: EnvironmentClaims
    ) -> None:
        self.catalog = catalog
        self.engine = engine
        self.builder = builder
        self.claims = claims

    @property
    def enabled(self) -> bool:
        return bool(self.catalog.shared_dirs)

    def publishing(self, name: str, shared_name: str | None = None) -> Claiming:
        """Claim the user's environment ``name`` to publish it as ``shared_name`` (the change's
        ``target``), after the checks that can fail fast. Raises Forbidden (sharing off, not the user's),
        Conflict (busy, the shared name taken)."""

        async def take() -> Change:
            target = await asyncio.to_thread(publish_dir, self.catalog.shared_dirs)
            final = target / validate_env_name(shared_name or name)
            owner = await asyncio.to_thread(owner_uid, final)
            if owner is not None:
                raise Conflict(
                    f"An environment named '{final.name}' is already shared by {user_name(owner)}; "
                    "publish under another name (or unpublish yours first).",
                    reason="env_exists",
                )
            return await self.claims.changing(name, "published", target=final)

        return Claiming(take)

    async def make(self, change: Change, description: str, report: Reporter | None) -> Path:
        """Put a copy of the claimed environment where ``change.target`` says, read-only for others,
        with its owner and ``description``; it appears only once complete. Returns where it is."""
        loc, final = change.env, change.target
        assert final is not None  # a publishing change names where it goes

        async def fill(build: Path) -> None:
            await self.engine.clone(loc.prefix, final, build_dir=build, report=part(report, 0.0, 0.95))
            await asyncio.to_thread(make_read_only_for_others, build, loc.prefix)
            await asyncio.to_thread(
                write_origin,
                build,
                source=str(loc.prefix),
                source_name=loc.name,
                made_from="share",
                engine=self.engine.name,
                description=description,
            )

        await self.builder.make(final, fill, "the shared copy", source=loc)
        self.catalog.refresh(final)
        return final

    async def unpublish(self, loc: EnvLocation) -> None:
        """Remove a shared environment this user published (Forbidden for anyone else's). What is
        removed is the entry in the shared folder: a link there is removed as a link, and nothing it
        points to is ever touched."""
        trash = await asyncio.to_thread(take_down, loc.found_as, loc.name)
        self.catalog.refresh(loc.prefix)
        await asyncio.shield(asyncio.to_thread(remove_tree, trash))
