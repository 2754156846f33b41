"""The server's database: one SQLite file in WAL mode behind one worker thread, on which each feature
keeps its own tables and its own migrations (a *part*: ``jobs``, ``schedules``, ``pipelines``, ``dask``).

One connection on one thread serializes the server's writes without locks and keeps SQLite off the
event loop; WAL lets another process (the CLI) read and write the same file meanwhile.

Each part's migrations are steps in order; the table ``schema_parts`` says how many of each part's steps
a file has. A part registers its steps (:meth:`Database.own`) when its records are made, and they run
before its next statement, so a feature added later migrates the files it finds. Files written before
parts existed numbered every step in one sequence (``PRAGMA user_version`` 1 to 8): a step that was one
of those says which (:class:`Step`'s ``legacy``), so such a file is read as having exactly those.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from ..errors import Conflict

T = TypeVar("T")

# user_version of a file whose schema is in schema_parts: above every number the one-sequence schema
# used, so a version of this package from before parts refuses the file instead of misreading it.
PARTS_VERSION = 100


@dataclass(frozen=True)
class Step:
    """One migration step of a part: its statements, and the one-sequence version it was, if any."""

    statements: Sequence[str]
    legacy: int | None = None


class Database:
    """The connection and the one thread every call runs on; shared by every feature's records."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gpu-env-db")
        self._db: sqlite3.Connection | None = None
        self._parts: dict[str, Sequence[Step]] = {}
        self._pending: list[str] = []  # registered, not yet brought up to date (on the db's thread)
        self._closed = False

    def own(self, part: str, steps: Sequence[Step]) -> None:
        """Register ``part``'s migrations; they run before the next statement. Registering the same
        part again (a second records object of a feature) changes nothing."""
        if part in self._parts:
            if self._parts[part] is not steps:
                raise ValueError(f"the database part {part!r} is owned by other migrations")
            return
        self._parts[part] = steps
        self._pending.append(part)

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on the database's thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, fn, *args)

    def conn(self) -> sqlite3.Connection:
        """The connection (opened on first use, every registered part migrated); only on the database's
        thread."""
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=10.0, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            # durable at checkpoints; a crash loses no committed WAL frame
            db.execute("PRAGMA synchronous=NORMAL")
            self._db = db
        while self._pending:
            part = self._pending[0]
            _migrate(self._db, part, self._parts[part])
            self._pending.pop(0)
        return self._db

    def close(self) -> None:
        """Close the connection and end the thread; closing again does nothing."""
        if self._closed:
            return
        self._closed = True

        def shut() -> None:
            if self._db is not None:
                self._db.close()
                self._db = None

        self._executor.submit(shut).result()
        self._executor.shutdown(wait=True)


class Records:
    """Base of a feature's records: made over the database, they register their part (``part``, its
    migrations ``steps``) and run each statement on the database's thread (``_call``) over its
    connection (``_conn``)."""

    part: ClassVar[str]
    steps: ClassVar[Sequence[Step]]

    def __init__(self, db: Database) -> None:
        db.own(self.part, self.steps)
        self._call = db.call
        self._conn = db.conn


def _migrate(db: sqlite3.Connection, part: str, steps: Sequence[Step]) -> None:
    with transaction(db, immediate=True):  # another process may be migrating the same file
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > PARTS_VERSION:
            raise Conflict(
                f"The database {db} was written by a newer jupyter-gpu-env (schema {version}).",
                reason="store_too_new",
            )
        db.execute(
            "CREATE TABLE IF NOT EXISTS schema_parts (part TEXT PRIMARY KEY, version INTEGER NOT NULL)"
        )
        if version != PARTS_VERSION:  # a new file (0), or one of the one-sequence schema (1 to 8)
            db.execute(f"PRAGMA user_version = {PARTS_VERSION}")
            db.execute("INSERT OR IGNORE INTO schema_parts VALUES ('legacy', ?)", (version,))
        found = db.execute("SELECT version FROM schema_parts WHERE part = ?", (part,)).fetchone()
        if found is None:
            legacy = db.execute("SELECT version FROM schema_parts WHERE part = 'legacy'").fetchone()
            done = sum(1 for s in steps if s.legacy is not None and s.legacy <= (legacy[0] if legacy else 0))
        else:
            done = found[0]
        if done > len(steps):
            raise Conflict(
                f"The database {db} was written by a newer jupyter-gpu-env ({part}: schema {done}, "
                f"this one reads {len(steps)}).",
                reason="store_too_new",
            )
        for step in steps[done:]:
            for statement in step.statements:
                db.execute(statement)
        db.execute("INSERT OR REPLACE INTO schema_parts VALUES (?, ?)", (part, len(steps)))


@contextlib.contextmanager
def transaction(db: sqlite3.Connection, *, immediate: bool = False) -> Iterator[None]:
    db.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
