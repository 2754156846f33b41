"""An environment being changed, as one handle: the claim on its name and where the change works.

A change is claimed while the request that asks for it is still open, so that what can fail fast (a bad
or taken name, a managed environment, another operation on the name: 409 at once) is the request's
answer. The operation then runs either right there (``async with envs.changing(name) as change:``) or
in a task that outlives the request: the task is handed the :class:`Change` and releases it when it
ends (``on_done=change.release``), and whoever starts the task releases it if the task never runs.
An operation given a change owns it from then on and releases it when it ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Generator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import Conflict, Forbidden, NotFound
from ..models.envs.syntax import validate_env_name
from .catalog import EnvironmentCatalog, EnvLocation
from .catalog.prefix import is_env
from .claims import Claim, Claims


@dataclass(eq=False)
class Change:
    """A held claim on ``env.name``. ``env`` is the environment changed, deleted or published, or,
    for one being made, where it will be (kind ``own``); ``source`` is what a clone copies; ``target``
    where a publish puts the shared copy."""

    claim: Claim
    env: EnvLocation
    source: EnvLocation | None = None
    target: Path | None = None

    @property
    def name(self) -> str:
        return self.env.name

    @property
    def prefix(self) -> Path:
        return self.env.prefix

    def release(self) -> None:
        """Let the name go (idempotent): when the operation has ended, or will never run."""
        self.claim.release()

    async def __aenter__(self) -> Change:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.release()


class Claiming:
    """A change about to be claimed: awaited, the :class:`Change` for a task to own; used with
    ``async with``, the change held for the block and released after it."""

    def __init__(self, take: Callable[[], Awaitable[Change]]) -> None:
        self._take = take
        self._change: Change | None = None

    def __await__(self) -> Generator[Any, None, Change]:
        return self._take().__await__()

    async def __aenter__(self) -> Change:
        self._change = await self._take()
        return self._change

    async def __aexit__(self, *exc: object) -> None:
        if self._change is not None:
            self._change.release()


@asynccontextmanager
async def owned(change: Change) -> AsyncIterator[Change]:
    """Hold ``change`` for an operation it was handed to: released when the operation ends."""
    try:
        yield change
    finally:
        change.release()


def held(target: str | Change, claim: Callable[[str], Claiming]) -> AbstractAsyncContextManager[Change]:
    """``target`` held for one operation: a change handed to it, or a name it claims with ``claim``."""
    return owned(target) if isinstance(target, Change) else claim(target)


def busy_message(name: str) -> str:
    return f"Another operation on '{name}' is in progress; try again when it ends."


class EnvironmentClaims:
    """Who may change which environment now: the user's own ones, one operation at a time per name."""

    def __init__(self, catalog: EnvironmentCatalog, claims: Claims | None = None) -> None:
        self.catalog = catalog
        self.claims = claims or Claims(catalog.user_env_dir)

    def busy(self, name: str) -> bool:
        """Is an operation of this server working on ``name``?"""
        return self.claims.held_here(name)

    async def own(self, name: str | EnvLocation, action: str) -> EnvLocation:
        """The user's own environment ``name``; Forbidden (saying it cannot be ``action``) for a managed
        or shared one."""
        loc = name if isinstance(name, EnvLocation) else await self.catalog.resolve(name)
        if loc.kind != "own":
            what = "a managed environment" if loc.kind == "managed" else "shared with the team (read-only)"
            raise Forbidden(
                f"'{loc.name}' is {what} and cannot be {action}. Clone it and change the clone.",
                reason="managed_env",
            )
        return loc

    def changing(
        self, name: str | EnvLocation, action: str = "changed", target: Path | None = None
    ) -> Claiming:
        """Claim one of the user's environments (found once: a name, a prefix or an already resolved
        location) for a change. Raises NotFound, Forbidden, Conflict(busy)."""

        async def take() -> Change:
            loc = await self.own(name, action)
            claim = await self.claims.take(loc.name, busy_message(loc.name))
            # Where it was read may be stale by now (another operation deleted it before letting the
            # name go): what the claim holds is the environment as it is once claimed.
            if not await asyncio.to_thread(is_env, loc.prefix):
                claim.release()
                raise NotFound(f"No environment named '{loc.name}' any more.", reason="env_not_found")
            return Change(claim, loc, target=target)

        return Claiming(take)

    def making(self, name: str, source: str | None = None) -> Claiming:
        """Claim ``name`` for a new environment of the user's, a clone of ``source`` if given. Raises
        InvalidRequest (bad name), NotFound (unknown source), Conflict (name taken, or being made by
        another request: of concurrent requests for one name exactly one gets past here)."""

        async def take() -> Change:
            validate_env_name(name)
            claim = self.claims.reserve(
                name, f"An environment named '{name}' is being made or changed right now."
            )
            try:
                final = self.catalog.user_env_dir / name
                if await asyncio.to_thread(self._taken, name, final):
                    raise Conflict(f"An environment named '{name}' already exists.", reason="env_exists")
                await self.claims.lock(
                    claim, f"An environment named '{name}' is being made elsewhere right now."
                )
                src = None if source is None else await self.catalog.resolve(source)
            except BaseException:
                claim.release()
                raise
            return Change(claim, EnvLocation(name, final, "own"), source=src)

        return Claiming(take)

    def _taken(self, name: str, final: Path) -> bool:
        names = {loc.name for loc in self.catalog.locate() if loc.kind != "shared"}
        return name in names or final.exists() or final.is_symlink()
