"""Finding environments and describing them, cached, off the event loop.

Where environments come from:

- **own**: each folder holding ``conda-meta/`` directly under the user's environment directory
  (folders starting with ``.`` are our temporaries and never listed);
- **managed**: for each configured managed directory, the directory itself if it is an environment,
  each sub-folder that is one, and the ``envs/*`` of a conda installation; then the entries of conda's
  own lists (``~/.conda/environments.txt``) that exist and are not under the user's directory.

Names are folder names. Own environments are listed first and keep their plain name (every write
operation targets them, and clone refuses a name already listed, so a clash only appears when a
managed environment is added later). A managed environment whose name is taken is listed as
``<name>@<parent folder>`` (then ``<name>@<8 hex of its prefix>``); ``@`` is not allowed in names
users choose, so these never collide with own environments.

Descriptions walk the whole prefix (size on disk), so they are cached per prefix and reused while
``conda-meta/`` and ``site-packages/`` keep their modification times; ``refresh()`` drops the cache.
"""

from __future__ import annotations

import asyncio
import builtins
import hashlib
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import kernelspecs
from ..errors import NotFound
from ..models.envs import Environment, EnvironmentDetail, EnvKind
from ..offloop import python_work
from . import conda_list
from .prefix import PrefixInfo, cache_key, describe, is_env


@dataclass(frozen=True)
class EnvLocation:
    name: str
    prefix: Path
    kind: EnvKind


def _real(p: Path) -> Path:
    return Path(os.path.realpath(p))


def _children(d: Path) -> list[Path]:
    try:
        return sorted(p for p in d.iterdir() if not p.name.startswith(".") and is_env(p))
    except OSError:
        return []


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


class EnvironmentCatalog:
    def __init__(
        self,
        managed_dirs: Sequence[Path | str],
        user_env_dir: Path | str,
        *,
        conda_lists: Sequence[Path | str] | None = None,
        kernel_data_dir: Path | str | None = None,
    ) -> None:
        self.managed_dirs = [Path(d).expanduser() for d in managed_dirs]
        self.user_env_dir = Path(user_env_dir).expanduser()
        self.conda_lists = [
            Path(p) for p in (conda_lists if conda_lists is not None else [conda_list.default_path()])
        ]
        self.kernel_data_dir = Path(kernel_data_dir) if kernel_data_dir else None
        self._cache: dict[Path, tuple[tuple[int, ...], PrefixInfo]] = {}
        self._lock = threading.Lock()
        self._inflight: asyncio.Future[list[EnvironmentDetail]] | None = None
        self._locating: asyncio.Future[list[EnvLocation]] | None = None

    # -- locating (cheap: a few listdir/stat calls per configured place) --------------------------

    def locate(self) -> list[EnvLocation]:
        """All environments with their API names (blocking)."""
        user_root = _real(self.user_env_dir)
        out: list[EnvLocation] = []
        seen: set[Path] = set()
        taken: set[str] = set()

        def add(prefix: Path, kind: EnvKind) -> None:
            real = _real(prefix)
            if real in seen:
                return
            if kind == "managed" and _under(real, user_root):
                return
            if kind == "own" and not _under(real, user_root):
                kind = "managed"  # a symlink out of the user's directory: never written to
            seen.add(real)
            name = prefix.name
            if name in taken:
                name = f"{prefix.name}@{prefix.parent.name or 'root'}"
            if name in taken:
                name = f"{prefix.name}@{hashlib.sha1(str(real).encode()).hexdigest()[:8]}"
            taken.add(name)
            out.append(EnvLocation(name, real, kind))

        for p in _children(self.user_env_dir):
            add(p, "own")
        for d in self.managed_dirs:
            if is_env(d):
                add(d, "managed")
            for p in _children(d) + _children(d / "envs"):
                add(p, "managed")
        for lst in self.conda_lists:
            for p in conda_list.read(lst):
                add(p, "managed")
        return out

    # -- describing (expensive: cached) -------------------------------------------------------------

    def _info(self, prefix: Path) -> PrefixInfo:
        key = cache_key(prefix)
        with self._lock:
            hit = self._cache.get(prefix)
        if hit and hit[0] == key:
            return hit[1]
        info = describe(prefix)
        with self._lock:
            self._cache[prefix] = (key, info)
        return info

    def _detail(self, loc: EnvLocation, kernel_names: dict[str, str]) -> EnvironmentDetail:
        info = self._info(loc.prefix)
        origin = info.origin
        return EnvironmentDetail(
            name=loc.name,
            prefix=str(loc.prefix),
            kind=loc.kind,
            python_version=info.python_version,
            package_count=len(info.packages),
            size_bytes=info.size_bytes,
            shared_bytes=info.shared_bytes,
            has_ipykernel=info.has_ipykernel,
            kernel_name=kernel_names.get(os.path.normpath(loc.prefix)),
            source=origin.get("source"),
            source_name=origin.get("source_name"),
            created_at=origin.get("created_at"),
            packages=info.packages,
        )

    def _kernel_names(self) -> dict[str, str]:
        return {
            os.path.normpath(k.prefix): k.kernel_name
            for k in kernelspecs.list_registered(self.kernel_data_dir)
        }

    def _scan(self) -> list[EnvironmentDetail]:
        locs = self.locate()
        knames = self._kernel_names()
        details = []
        for loc in locs:
            try:
                details.append(self._detail(loc, knames))
            except OSError:
                continue  # vanished or unreadable while we looked: not listed this time
        with self._lock:
            alive = {loc.prefix for loc in locs}
            for stale in [p for p in self._cache if p not in alive]:
                del self._cache[stale]
        return details

    # -- async API ----------------------------------------------------------------------------------

    async def list_details(self) -> list[EnvironmentDetail]:
        """Every environment with packages; concurrent callers share one scan."""
        if self._inflight is None or self._inflight.done():
            self._inflight = asyncio.ensure_future(python_work(self._scan))
        return await asyncio.shield(self._inflight)

    async def list(self) -> list[Environment]:
        details = await self.list_details()
        return [Environment.model_validate(d.model_dump(exclude={"packages"})) for d in details]

    async def locations(self) -> builtins.list[EnvLocation]:
        """:meth:`locate` off the loop; concurrent callers share one look (a burst of requests, one scan)."""
        if self._locating is None or self._locating.done():
            self._locating = asyncio.ensure_future(asyncio.to_thread(self.locate))
        return await asyncio.shield(self._locating)

    async def resolve(self, name_or_prefix: str) -> EnvLocation:
        """The environment listed under this name (or at this prefix); NotFound otherwise."""
        locs = await self.locations()
        for loc in locs:
            if loc.name == name_or_prefix:
                return loc
        if os.path.isabs(name_or_prefix):
            real = _real(Path(name_or_prefix))
            for loc in locs:
                if loc.prefix == real:
                    return loc
        known = ", ".join(sorted(loc.name for loc in locs)) or "none"
        raise NotFound(
            f"No environment named '{name_or_prefix}'. Known environments: {known}.", reason="env_not_found"
        )

    async def get(self, name: str) -> EnvironmentDetail:
        loc = await self.resolve(name)

        def one() -> EnvironmentDetail:
            return self._detail(loc, self._kernel_names())

        return await python_work(one)

    def refresh(self, prefix: Path | str | None = None) -> None:
        """Forget cached descriptions (of one prefix, or all); the next listing re-reads them."""
        with self._lock:
            if prefix is None:
                self._cache.clear()
            else:
                self._cache.pop(_real(Path(prefix)), None)
