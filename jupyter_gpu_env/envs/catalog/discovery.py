"""Finding environments and describing them, cached, off the event loop.

Where environments come from:

- **own**: each folder holding ``conda-meta/`` directly under the user's environment directory
  (folders starting with ``.`` are our temporaries and never listed);
- **managed**: for each configured managed directory, the directory itself if it is an environment,
  each sub-folder that is one, and the ``envs/*`` of a conda installation; then the entries of conda's
  own lists (``~/.conda/environments.txt``) that exist and are not under the user's directory;
- **shared**: each environment folder directly in a configured shared directory (published by a user
  of the team, see :mod:`..sharing`).

Names are folder names. Own environments are listed first and keep their plain name (every write
operation targets them, and clone refuses a name already listed, so a clash only appears when a
managed environment is added later). A managed environment whose name is taken is listed as
``<name>@<parent folder>`` (then ``<name>@<8 hex of its prefix>``); ``@`` is not allowed in names
users choose, so these never collide with own environments.

A listing reads only folder listings per environment (``summarize``: package counts from the names of
``conda-meta/`` records and of site-packages' distributions); sizes on disk, which walk the whole prefix,
are measured afterwards on one background thread, and until then the listing says ``measuring``. What is
known is kept per prefix while ``conda-meta/`` and ``site-packages/`` keep their modification times,
and saved to ``state_file`` so that a restart does not measure unchanged environments again.
``refresh()`` forgets it.
"""

from __future__ import annotations

import asyncio
import builtins
import functools
import hashlib
import logging
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ... import kernelspecs
from ...errors import NotFound
from ...models.envs import Environment, EnvironmentDetail, EnvKind, MadeFrom
from ...system.offloop import python_work
from .. import conda_list
from . import saved
from .prefix import (
    PrefixSummary,
    cache_key,
    describe,
    disk_usage,
    is_env,
    owner_uid,
    site_dirs,
    summarize,
    user_name,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EnvLocation:
    """An environment: its API ``name``, its real ``prefix`` and, where that differs, the ``entry`` it
    was found as (a link in a folder of environments; removing it removes the link, not its target)."""

    name: str
    prefix: Path
    kind: EnvKind
    entry: Path | None = None

    @property
    def found_as(self) -> Path:
        """The name in its folder: what is renamed or removed, never followed."""
        return self.entry or self.prefix


def _real(p: Path) -> Path:
    return Path(os.path.realpath(p))


def _children(d: Path) -> list[tuple[Path, Path]]:
    """The environments directly in ``d``, each with its real path (one realpath for ``d``, not each)."""
    try:
        real_d = os.path.realpath(d)
        with os.scandir(d) as it:
            found = [
                (Path(e.path), _real(Path(e.path)) if e.is_symlink() else Path(real_d, e.name))
                for e in it
                if not e.name.startswith(".") and os.path.isdir(os.path.join(e.path, "conda-meta"))
            ]
    except OSError:
        return []
    return sorted(found)


def _under(path: Path, root: Path) -> bool:
    return path == root or str(path).startswith(f"{root}{os.sep}")


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


_MADE_FROM: dict[str, MadeFrom] = {"clone": "clone", "file": "file", "share": "share"}


def _made_from(origin: dict[str, Any]) -> MadeFrom | None:
    """How the origin record says the environment was made; records older than the field were clones."""
    made = origin.get("made_from")
    if isinstance(made, str) and made in _MADE_FROM:
        return _MADE_FROM[made]
    return "clone" if origin.get("source_name") else None


@dataclass
class _Entry:
    """The catalog's knowledge of one prefix, valid while its ``cache_key`` is ``key``."""

    key: tuple[int, ...]
    summary: PrefixSummary
    size: tuple[int, int] | None = None  # (bytes on disk, of which shared), once measured
    sites: tuple[Path, ...] | None = None  # its site-packages folders, as the key last found them


class EnvironmentCatalog:
    def __init__(
        self,
        managed_dirs: Sequence[Path | str],
        user_env_dir: Path | str,
        *,
        conda_lists: Sequence[Path | str] | None = None,
        kernel_data_dir: Path | str | None = None,
        state_file: Path | str | None = None,
        shared_dirs: Sequence[Path | str] = (),
    ) -> None:
        self.managed_dirs = [Path(d).expanduser() for d in managed_dirs]
        self.shared_dirs = [Path(d).expanduser() for d in shared_dirs]
        self.user_env_dir = Path(user_env_dir).expanduser()
        self.conda_lists = [
            Path(p) for p in (conda_lists if conda_lists is not None else [conda_list.default_path()])
        ]
        self.kernel_data_dir = Path(kernel_data_dir) if kernel_data_dir else None
        self.state_file = Path(state_file) if state_file else None
        self._entries: dict[Path, _Entry] | None = None  # read from state_file on first use
        self._lock = threading.RLock()
        self._measuring: set[Path] = set()
        self._measured = threading.Condition(self._lock)
        self._inflight: asyncio.Future[list[Environment]] | None = None
        self._locating: asyncio.Future[list[EnvLocation]] | None = None

    # -- locating (cheap: a few listdir/stat calls per configured place) --------------------------

    def locate(self) -> list[EnvLocation]:
        """All environments with their API names (blocking)."""
        user_root = _real(self.user_env_dir)
        out: list[EnvLocation] = []
        seen: set[Path] = set()
        taken: set[str] = set()

        def add(prefix: Path, kind: EnvKind, real: Path | None = None) -> None:
            real = real or _real(prefix)
            if real in seen:
                return
            if kind != "own" and _under(real, user_root):
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
            out.append(EnvLocation(name, real, kind, None if prefix == real else prefix))

        for p, real in _children(self.user_env_dir):
            add(p, "own", real)
        for d in self.managed_dirs:
            if is_env(d):
                add(d, "managed")
            for p, real in _children(d) + _children(d / "envs"):
                add(p, "managed", real)
        for lst in self.conda_lists:
            for p in conda_list.read(lst):
                if not any(_under(_real(p), _real(d)) for d in self.shared_dirs):
                    add(p, "managed")
        for d in self.shared_dirs:
            for p, real in _children(d):
                add(p, "shared", real)
        return out

    # -- describing: cheap at once, sizes measured in the background ---------------------------------

    def _known(self) -> dict[Path, _Entry]:
        with self._lock:
            if self._entries is None:
                self._entries = saved.load(self.state_file, _Entry) if self.state_file else {}
            return self._entries

    def _entry(self, prefix: Path) -> tuple[_Entry, bool]:
        """The current entry of ``prefix`` and whether it had to be made anew."""
        known = self._known()
        with self._lock:
            entry = known.get(prefix)
        if entry is not None and entry.sites is not None and cache_key(prefix, entry.sites) == entry.key:
            return entry, False
        sites = site_dirs(prefix)
        key = cache_key(prefix, sites)
        if entry is not None and entry.key == key:
            entry.sites = sites
            return entry, False
        entry = _Entry(key, summarize(prefix), sites=sites)
        with self._lock:
            known[prefix] = entry
        return entry, True

    def _environment(self, loc: EnvLocation, entry: _Entry, kernel_names: dict[str, str]) -> Environment:
        info, origin = entry.summary, entry.summary.origin
        shared = loc.kind == "shared"
        owner = owner_uid(loc.found_as) if shared else None
        return Environment(
            name=loc.name,
            prefix=str(loc.prefix),
            kind=loc.kind,
            python_version=info.python_version,
            package_count=info.package_count,
            size_bytes=entry.size[0] if entry.size else None,
            shared_bytes=entry.size[1] if entry.size else None,
            size_state="measured" if entry.size else "measuring",
            has_ipykernel=info.has_ipykernel,
            kernel_name=kernel_names.get(os.path.normpath(loc.prefix)),
            source=origin.get("source"),
            source_name=origin.get("source_name"),
            made_from=_made_from(origin),
            created_at=origin.get("created_at"),
            owner=None if owner is None else user_name(owner),
            description=_text(origin.get("description")) if shared else None,
            can_unpublish=owner is not None and owner == os.getuid(),
        )

    def _kernel_names(self) -> dict[str, str]:
        return {
            os.path.normpath(k.prefix): k.kernel_name
            for k in kernelspecs.list_registered(self.kernel_data_dir)
        }

    def _scan(self, *, wait_for_sizes: bool = False) -> list[Environment]:
        locs = self.locate()
        knames = self._kernel_names()
        entries: list[tuple[EnvLocation, _Entry]] = []
        changed = False
        for loc in locs:
            try:
                entry, new = self._entry(loc.prefix)
            except OSError:
                continue  # vanished or unreadable while we looked: not listed this time
            entries.append((loc, entry))
            changed = changed or new
        with self._lock:
            known = self._known()
            alive = {loc.prefix for loc in locs}
            for stale in [p for p in known if p not in alive]:
                del known[stale]
                changed = True
            unmeasured = [loc.prefix for loc, e in entries if e.size is None]
        if unmeasured:
            if wait_for_sizes:
                self._measure(unmeasured)
                entries = [(loc, self._known().get(loc.prefix, e)) for loc, e in entries]
            else:
                self._measure_later(unmeasured)
        elif changed:
            self._save()
        return [self._environment(loc, e, knames) for loc, e in entries]

    def _measure_later(self, prefixes: builtins.list[Path]) -> None:
        with self._lock:
            todo = [p for p in prefixes if p not in self._measuring]
            self._measuring.update(todo)
        if todo:
            _measurer.submit(self._measure, todo)

    def _measure(self, prefixes: builtins.list[Path]) -> None:
        """Describe each prefix whole (exact package count, size on disk) and keep it; then save."""
        try:
            for prefix in prefixes:
                try:
                    key = cache_key(prefix)
                    entry = _Entry(key, describe(prefix).summary(), disk_usage(prefix))
                except OSError:
                    continue  # gone or unreadable: the next listing says so
                except Exception:  # one odd environment must not stop the others' sizes
                    log.exception("could not measure the environment at %s", prefix)
                    continue
                with self._lock:
                    self._known()[prefix] = entry
            self._save()
        finally:
            with self._lock:
                self._measuring.difference_update(prefixes)
                self._measured.notify_all()

    def wait_measured(self, timeout: float | None = None) -> bool:
        """Block until no size is being measured (tests, benchmarks); False on timeout."""
        with self._lock:
            return self._measured.wait_for(lambda: not self._measuring, timeout)

    def _save(self) -> None:
        if self.state_file is None:
            return
        with self._lock:
            snapshot = dict(self._known())
        try:
            saved.save(self.state_file, snapshot)
        except OSError as e:  # the catalog is a cache: a failed save costs a rescan after a restart
            log.warning("could not save the environment catalog to %s: %s", self.state_file, e)

    def _detail(self, loc: EnvLocation, kernel_names: dict[str, str]) -> EnvironmentDetail:
        """One environment with its packages, read now (its size measured now if not known)."""
        key = cache_key(loc.prefix)
        info = describe(loc.prefix)
        with self._lock:
            entry = self._known().get(loc.prefix)
        size = entry.size if entry is not None and entry.key == key else None
        entry = _Entry(key, info.summary(), size or disk_usage(loc.prefix))
        with self._lock:
            self._known()[loc.prefix] = entry
        listed = self._environment(loc, entry, kernel_names)
        return EnvironmentDetail(**listed.model_dump(), packages=info.packages)

    # -- async API ----------------------------------------------------------------------------------

    async def list(self, *, wait_for_sizes: bool = False) -> builtins.list[Environment]:
        """Every environment; sizes not measured yet say so (``size_state``) unless ``wait_for_sizes``.
        Concurrent callers share one scan."""
        if wait_for_sizes:
            return await python_work(functools.partial(self._scan, wait_for_sizes=True))
        if self._inflight is None or self._inflight.done():
            self._inflight = asyncio.ensure_future(python_work(self._scan))
        return await asyncio.shield(self._inflight)

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

    async def listed(self, name: str) -> Environment:
        """One environment as the list shows it (its size measured in the background if it changed)."""
        loc = await self.resolve(name)

        def one() -> Environment:
            entry, _ = self._entry(loc.prefix)
            if entry.size is None:
                self._measure_later([loc.prefix])
            return self._environment(loc, entry, self._kernel_names())

        return await python_work(one)

    async def get(self, name: str) -> EnvironmentDetail:
        loc = await self.resolve(name)

        def one() -> EnvironmentDetail:
            return self._detail(loc, self._kernel_names())

        return await python_work(one)

    def refresh(self, prefix: Path | str | None = None) -> None:
        """Forget what is known (of one prefix, or all); the next listing reads it again."""
        with self._lock:
            known = self._known()
            if prefix is None:
                known.clear()
            else:
                known.pop(_real(Path(prefix)), None)


# One thread measures sizes for every catalog: walks of big prefixes are disk-bound, and two at once
# on one disk are slower than one after the other.
_measurer = ThreadPoolExecutor(1, thread_name_prefix="gpu-env-sizes")
