"""The child process that runs py-rattler: ``python -m jupyter_gpu_env.envs.rattler.worker``.

py-rattler is only ever imported here, never in the server: version 0.28 can abort at interpreter
exit, so this process ends with ``os._exit``. Protocol: one JSON request on stdin; JSON lines on
stdout, ``{"progress": 0.4, "message": "..."}``, ``{"log": "..."}``, then exactly one of
``{"result": {...}}`` or ``{"error": "...", "reason": "..."}``. Anything else the libraries print
goes to stderr (file descriptor 1 is pointed at 2 before they load).

A server starts one worker ahead of need (a spare, see :mod:`jupyter_gpu_env.system.spare`): it imports
rattler first, then waits for its request, and leaves after a while without one, or at once when its
server's end of the pipe closes.

Operations: ``create`` (solve + install), ``clone`` (relink another prefix's records),
``install`` (add/remove packages in a prefix), ``index`` (write a local channel's repodata).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from ...system.spare import read_request
from ...system.trees import remove_tree
from ...system.untrusted import open_regular_file

_out: TextIO = sys.stdout
DISK_FULL = "No space left on device"  # ENOSPC as Python and rattler (``… (os error 28)``) say it


class WorkerError(Exception):
    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def emit(**msg: Any) -> None:
    _out.write(json.dumps(msg) + "\n")
    _out.flush()


def progress(fraction: float, message: str) -> None:
    emit(progress=round(fraction, 4), message=message)


def _reporter(lo: float, hi: float, verb: str) -> Any:
    from rattler.install import InstallerReporter

    class Reporter(InstallerReporter):
        def __init__(self) -> None:
            self.total, self.done = 1, 0

        def on_transaction_start(self, total_operations: int) -> None:
            self.total = max(total_operations, 1)
            progress(lo, f"{verb} {total_operations} packages")

        def on_transaction_operation_complete(self, operation: int) -> None:
            self.done += 1
            progress(lo + (hi - lo) * self.done / self.total, f"{verb} packages ({self.done}/{self.total})")

    return Reporter()  # type: ignore[abstract]  # the stubs leave the other callbacks' bodies empty


def _platforms() -> list[Any]:
    from rattler import Platform

    return [Platform.current(), Platform("noarch")]


def _virtual_packages() -> list[Any]:
    from rattler import VirtualPackage

    try:
        return VirtualPackage.detect()
    except Exception:  # detection problems must not block offline use
        return []


def _specs(specs: list[str]) -> list[Any]:
    from rattler import MatchSpec
    from rattler.exceptions import InvalidMatchSpecError

    out = []
    for s in specs:
        try:
            out.append(MatchSpec(s))
        except InvalidMatchSpecError as e:
            raise WorkerError(f"'{s}' is not a valid package spec: {e}", "invalid_spec") from e
    return out


def _load_records(prefix: Path) -> list[Any]:
    """The records; a file rattler would wait on for ever (a named pipe) or too large is skipped."""
    from rattler import PrefixRecord

    return [PrefixRecord.from_path(p) for p in sorted((prefix / "conda-meta").glob("*.json")) if _record(p)]


def _record(path: Path) -> bool:
    try:
        with open_regular_file(path) as f:
            return os.fstat(f.fileno()).st_size <= 64 << 20  # catalog.prefix.RECORD_BYTES
    except OSError:
        return False


def _name(record: Any) -> str:
    name: str = record.name.normalized  # py-rattler has no type information
    return name


async def _solve(req: dict[str, Any], specs: list[Any], locked: list[Any], requested: list[Any]) -> list[Any]:
    """Solve ``specs``; when unsolvable, name the ``requested`` specs whose package no channel has."""
    from rattler import Channel, Gateway, solve
    from rattler.exceptions import GatewayError, SolverError

    channels = [Channel(c) for c in req["channels"]]
    where = ", ".join(req["channels"]) or "(no channels configured)"
    gateway = Gateway(cache_dir=Path(req["pkgs_dir"]) / "cache")
    try:
        return await solve(
            sources=channels,
            specs=specs,
            gateway=gateway,
            platforms=_platforms(),
            locked_packages=locked,
            virtual_packages=_virtual_packages(),
        )
    except GatewayError as e:
        raise WorkerError(f"A channel could not be read ({where}): {e}", "channel_unavailable") from e
    except SolverError as e:
        try:
            names = {n.normalized for n in (await gateway.names(channels, _platforms())).names}
        except Exception:
            names = None
        missing = [
            s.name.normalized for s in requested if names is not None and s.name.normalized not in names
        ]
        if missing:
            which = ", ".join(f"'{m}'" for m in missing)
            raise WorkerError(f"Package {which} not found in channels {where}.", "package_not_found") from e
        raise WorkerError(f"The request cannot be satisfied: {str(e).strip()}", "unsolvable") from e


def _requested(records: list[Any], extra: tuple[str, ...] | list[str] = ()) -> list[Any]:
    from rattler import MatchSpec

    specs = sorted({s for r in records for s in (r.requested_specs or [])} | set(extra))
    # py-rattler 0.28's install() wants the inner objects here
    return [MatchSpec(s)._match_spec for s in specs]


async def op_create(req: dict[str, Any]) -> dict[str, Any]:
    from rattler import install

    specs = _specs(req["specs"])
    progress(0.05, "Solving")
    records = await _solve(req, specs, [], specs)
    if req.get("dry_run"):
        return {"plan": _plan([], records, Path(req["pkgs_dir"]))}
    progress(0.2, f"Solved: {len(records)} packages")
    await install(
        records,
        target_prefix=req["prefix"],
        cache_dir=req["pkgs_dir"],
        installed_packages=[],
        show_progress=False,
        requested_specs=[s._match_spec for s in specs],
        reporter=_reporter(0.2, 1.0, "Installing"),
        alternative_target_prefix=req.get("final_prefix"),
    )
    return {"packages": sorted(f"{_name(r)}-{r.version}-{r.build}" for r in records)}


async def op_clone(req: dict[str, Any]) -> dict[str, Any]:
    from rattler import install
    from rattler.package_cache import PackageCache

    source, target = Path(req["source"]), Path(req["prefix"])
    records = _load_records(source)
    index = await PackageCache(req["pkgs_dir"]).index()
    missing = {i for i, r in enumerate(records) if not index.contains_record(r)}
    progress(0.05, f"{len(records)} packages, {len(missing)} not in the package cache")

    async def link(recs: list[Any]) -> None:
        await install(
            recs,
            target_prefix=str(target),
            cache_dir=req["pkgs_dir"],
            installed_packages=[],
            show_progress=False,
            requested_specs=_requested(records),
            reporter=_reporter(0.05, 1.0, "Linking"),
            alternative_target_prefix=req.get("final_prefix"),
        )

    copied = [f"{_name(records[i])}-{records[i].version}-{records[i].build}" for i in sorted(missing)]
    if missing and req.get("copy_missing"):  # the source's own files are at hand: nothing to fetch again
        await link([r for i, r in enumerate(records) if i not in missing])
        return {"packages": len(records), "fetched": [], "copied_from_source": copied}
    try:
        await link(records)
        copied = []
    except Exception as e:
        if not missing or DISK_FULL in str(e):  # a full disk is no failed download: said as it is
            raise
        # Packages their channel no longer serves: link the rest; the caller copies those from the source.
        emit(log=f"Fetching {len(missing)} packages failed ({e}); they will be copied from the source")
        if not remove_tree(target):
            raise  # what it linked cannot be removed: the failure is said as it was
        os.makedirs(target)
        await link([r for i, r in enumerate(records) if i not in missing])
    fetched = [] if copied else [_name(records[i]) for i in sorted(missing)]
    return {"packages": len(records), "fetched": fetched, "copied_from_source": copied}


def _dependents(records: list[Any], names: set[str]) -> set[str]:
    """``names`` plus every installed package that depends on them, transitively."""
    deps = {_name(r): {d.split()[0].lower() for d in r.depends} for r in records}
    out = set(names)
    changed = True
    while changed:
        changed = False
        for name, needs in deps.items():
            if name not in out and needs & out:
                out.add(name)
                changed = True
    return out


def _cached(pkgs_dir: Path, record: Any) -> bool:
    file_name: str = record.file_name  # py-rattler has no type information
    stem = file_name.removesuffix(".conda").removesuffix(".tar.bz2")
    return (pkgs_dir / stem / "info").is_dir() or (pkgs_dir / file_name).is_file()


def _plan(installed: list[Any], solved: list[Any], pkgs_dir: Path) -> list[dict[str, Any]]:
    """Each package the solve changes: its versions before and after, and the bytes to download
    (nothing for a package already in the package cache)."""
    old = {_name(r): r for r in installed}
    new = {_name(r): r for r in solved}
    steps = []
    for name in sorted(old.keys() | new.keys()):
        a, b = old.get(name), new.get(name)
        if (
            a is not None
            and b is not None
            and (str(a.version), str(a.build)) == (str(b.version), str(b.build))
        ):
            continue
        download = None if b is None else (0 if _cached(pkgs_dir, b) else (b.size or None))
        steps.append(
            {
                "name": name,
                "before": None if a is None else str(a.version),
                "after": None if b is None else str(b.version),
                "build_before": None if a is None else str(a.build),
                "build_after": None if b is None else str(b.build),
                "download_bytes": download,
            }
        )
    return steps


async def op_install(req: dict[str, Any]) -> dict[str, Any]:
    from rattler import MatchSpec, install

    prefix = Path(req["prefix"])
    installed = _load_records(prefix)
    by_name = {_name(r): r for r in installed}
    add = _specs(req.get("add", []))
    add_names = {s.name.normalized for s in add}
    remove = {n.lower() for n in req.get("remove", [])}
    if unknown := sorted(remove - set(by_name)):
        raise WorkerError(f"Not installed, so cannot be removed: {', '.join(unknown)}.", "not_installed")
    if "python" in remove:
        raise WorkerError(
            "Removing python would remove every Python package; delete the environment instead.",
            "invalid_request",
        )
    drop = _dependents(installed, remove) if remove else set()
    keep = [r for r in installed if _name(r) not in drop]
    specs = [MatchSpec(_name(r)) for r in keep if _name(r) not in add_names] + add
    progress(0.05, "Solving")
    records = await _solve(req, specs, keep, add)
    if clash := sorted(drop & {_name(r) for r in records}):
        raise WorkerError(f"Cannot remove {', '.join(clash)}: the packages to add need it.", "unsolvable")
    if req.get("dry_run"):
        return {"plan": _plan(installed, records, Path(req["pkgs_dir"]))}
    before = {f"{_name(r)}-{r.version}-{r.build}" for r in installed}
    after = {f"{_name(r)}-{r.version}-{r.build}" for r in records}
    progress(0.2, f"Solved: {len(after - before)} to install, {len(before - after)} to remove")
    if before != after:
        await install(
            records,
            target_prefix=str(prefix),
            cache_dir=req["pkgs_dir"],
            installed_packages=installed,
            show_progress=False,
            requested_specs=_requested(keep, [str(s) for s in add]),
            reporter=_reporter(0.2, 1.0, "Installing"),
            alternative_target_prefix=req.get("final_prefix"),
        )
    return {"installed": sorted(after - before), "removed": sorted(before - after)}


def _ranked(names: list[str], query: str, limit: int) -> list[str]:
    """Names holding ``query``: the exact one, then those starting with it, then the others; shortest
    first within each."""
    q = query.lower()
    hits = [n for n in names if q in n]
    return sorted(hits, key=lambda n: (n != q, not n.startswith(q), len(n), n))[:limit]


async def op_search(req: dict[str, Any]) -> dict[str, Any]:
    """Packages of the channels whose name holds ``query``, each with its newest versions."""
    from rattler import Channel, Gateway, MatchSpec
    from rattler.exceptions import GatewayError

    channels = [Channel(c) for c in req["channels"]]
    gateway = Gateway(cache_dir=Path(req["pkgs_dir"]) / "cache")
    try:
        names = sorted({n.normalized for n in (await gateway.names(channels, _platforms())).names})
        chosen = _ranked(names, req["query"], int(req.get("limit", 20)))
        found = await gateway.query(channels, _platforms(), [MatchSpec(n) for n in chosen]) if chosen else []
    except GatewayError as e:
        where = ", ".join(req["channels"])
        raise WorkerError(f"A channel could not be read ({where}): {e}", "channel_unavailable") from e
    versions: dict[str, set[Any]] = {n: set() for n in chosen}
    for records in found:
        for r in records:
            if _name(r) in versions:
                versions[_name(r)].add(r.version)
    return {
        "packages": [
            {"name": n, "versions": [str(v) for v in sorted(versions[n], reverse=True)[:8]]} for n in chosen
        ],
        "total": sum(1 for n in names if req["query"].lower() in n),
    }


async def op_index(req: dict[str, Any]) -> dict[str, Any]:
    from rattler.index import index_fs

    progress(0.1, "Indexing the channel")
    await index_fs(Path(req["channel"]), write_zst=False, write_shards=False, force=True)
    return {}


OPS = {"create": op_create, "clone": op_clone, "install": op_install, "index": op_index, "search": op_search}


def _classify(e: BaseException) -> tuple[str, str]:
    if isinstance(e, WorkerError):
        return str(e), e.reason
    kind = type(e).__name__
    text = str(e).strip() or kind
    if DISK_FULL in text:
        return text, "disk_full"
    if kind in ("FetchRepoDataError", "GatewayError", "InvalidChannelError"):
        return f"A channel could not be read: {text}", "channel_unavailable"
    if kind in ("InstallerError", "LinkError", "TransactionError", "ExtractError", "IoError"):
        reachable = "error sending request" not in text and "No such file" not in text
        return f"Installing failed: {text}", "install_failed" if reachable else "channel_unavailable"
    return f"{kind}: {text}", "engine_failed"


def main() -> None:
    global _out
    _out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)  # whatever the libraries print must not corrupt the protocol
    code = 0
    # Started ahead of need (a spare), the worker loads rattler while nobody waits, then waits for its
    # request (see spare.py).
    import rattler.install  # noqa: F401

    request = read_request()
    if request is None:
        os._exit(0)
    try:
        req = json.loads(request)
        op = OPS[req["op"]]
        started = time.monotonic()
        result = asyncio.run(op(req))
        result["seconds"] = round(time.monotonic() - started, 3)
        emit(result=result)
    except BaseException as e:  # report everything: the parent maps reasons to API errors
        message, reason = _classify(e)
        emit(error=message, reason=reason)
        code = 0 if reason != "engine_failed" else 1
    _out.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
