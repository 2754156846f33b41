"""Environments made from a file under the server's root: environment.yml, requirements.txt or an
explicit lock (parsed by :mod:`.specfile`), planned first, built aside and renamed into place like a
clone (:class:`~jupyter_gpu_env.envs.building.Builder`)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from pathlib import Path

from ...errors import Forbidden, InvalidRequest, NotFound
from ...inputs import resolve_in_root
from ...models.envs import CreateReport
from ...models.envs.packages import PackagesPlan
from ...models.envs.syntax import validate_env_name
from ...system.offloop import python_work
from ...system.untrusted import read_regular_file
from ..building import Builder
from ..catalog.prefix import write_origin
from ..changes import create
from ..changing import Change
from ..engine import CondaEngine, ProgressFn, Reporter
from ..pip.tool import PipSettings
from . import specfile
from .specfile import EnvFile


@dataclass(frozen=True)
class FileEnvironments:
    """Environments made from a file under ``root_dir`` (a terminal's: ``/``)."""

    engine: CondaEngine
    pip: PipSettings
    builder: Builder
    root_dir: Path

    def under(self, root_dir: Path) -> FileEnvironments:
        """The same, reading files under ``root_dir`` instead."""
        return replace(self, root_dir=root_dir)

    async def read_file(self, from_file: str) -> tuple[Path, EnvFile]:
        """The file under the server's root an environment is to be made from, parsed. Raises
        InvalidRequest (no regular file, too large, or what is wrong in it), Forbidden (outside the root),
        NotFound. Read without ever waiting on what the file is (a named pipe is refused at once), parsed
        on the thread for Python work, never on the event loop."""
        path = resolve_in_root(self.root_dir, from_file, "from_file", "file")

        def read() -> bytes:
            try:
                return read_regular_file(path, specfile.MAX_FILE_BYTES, name=from_file)
            except (FileNotFoundError, NotADirectoryError):
                raise NotFound(f"There is no file at '{from_file}'.", reason="file_not_found") from None
            except PermissionError:
                raise Forbidden(f"You may not read '{from_file}'.", reason="unreadable") from None

        def parse(data: bytes) -> EnvFile:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                raise InvalidRequest(f"'{from_file}' is not a text file (UTF-8).") from None
            return specfile.parse(from_file, text, self.engine.channels)

        data = await asyncio.to_thread(read)
        return path, await python_work(parse, data)

    async def make(
        self, new: Change, path: Path, spec: EnvFile, from_file: str, report: Reporter | None, change_id: str
    ) -> CreateReport:
        """Make the claimed environment ``new`` from ``spec`` (read from ``path``, named ``from_file``
        by the request); like a clone, it appears only once complete. Raises the engine's and the
        installer's errors."""

        async def fill(build: Path) -> CreateReport:
            built = await create.build(
                self.engine,
                self.pip,
                build,
                new.prefix,
                spec,
                from_file=from_file,
                change_id=change_id,
                report=report,
            )
            await asyncio.to_thread(
                write_origin,
                build,
                source=str(path),
                source_name=path.name,
                made_from="file",
                engine=self.engine.name,
            )
            return built

        return await self.builder.make(new.prefix, fill, "the new environment")

    async def plan(self, name: str, from_file: str, *, progress: ProgressFn | None = None) -> PackagesPlan:
        """What :meth:`create` would install; nothing is made."""
        validate_env_name(name)
        _, spec = await self.read_file(from_file)
        return await create.plan(self.engine, self.pip, name, spec, progress=progress)
