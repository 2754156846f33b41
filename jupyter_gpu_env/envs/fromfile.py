"""Environments made from a file under the server's root: environment.yml, requirements.txt or an
explicit lock (parsed by :mod:`.specfile`), planned first, built aside and renamed into place like a
clone (:meth:`.service.EnvironmentService.make`)."""

from __future__ import annotations

import asyncio
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import Forbidden, InvalidRequest, NotFound
from ..inputs import resolve_in_root
from ..models.envs import CreateReport, CreateResult
from ..models.envs.packages import PackagesPlan
from ..models.envs.syntax import validate_env_name
from . import specfile
from .changes import create
from .engine import LogFn, ProgressFn
from .prefix import write_origin
from .specfile import EnvFile

if TYPE_CHECKING:
    from .claims import Claim
    from .service import EnvironmentService


class FileEnvironments:
    def __init__(self, envs: EnvironmentService, root_dir: Path | str | None = None) -> None:
        self.envs = envs
        self.root_dir = Path(root_dir or os.getcwd())

    async def read_file(self, from_file: str) -> tuple[Path, EnvFile]:
        """The file under the server's root an environment is to be made from, parsed. Raises
        InvalidRequest (not such a file, or what is wrong in it), Forbidden (outside the root), NotFound."""
        path = resolve_in_root(self.root_dir, from_file, "from_file", "file")

        def read() -> str:
            try:
                if path.stat().st_size > specfile.MAX_FILE_BYTES:
                    raise InvalidRequest(f"'{from_file}' is larger than an environment file can be (1 MiB).")
                return path.read_text(encoding="utf-8")
            except (FileNotFoundError, NotADirectoryError):
                raise NotFound(f"There is no file at '{from_file}'.", reason="file_not_found") from None
            except IsADirectoryError:
                raise InvalidRequest(f"'{from_file}' is a folder, not a file.") from None
            except UnicodeDecodeError:
                raise InvalidRequest(f"'{from_file}' is not a text file (UTF-8).") from None
            except PermissionError:
                raise Forbidden(f"You may not read '{from_file}'.", reason="unreadable") from None

        text = await asyncio.to_thread(read)
        return path, specfile.parse(from_file, text)

    async def create(
        self,
        name: str,
        from_file: str,
        *,
        progress: ProgressFn | None = None,
        log: LogFn | None = None,
        claimed: Claim | None = None,
        change_id: str | None = None,
    ) -> CreateResult:
        """Make the user's environment ``name`` from a file under the server's root (see
        :mod:`.specfile`); like a clone, it appears only once complete. Raises what :meth:`read_file`
        and :meth:`begin_new` raise, and the engine's and installer's errors."""
        path, spec = await self.read_file(from_file)
        claim = claimed or await self.envs.begin_new(name)
        final = self.envs.user_env_dir / name

        async def fill(build: Path) -> CreateReport:
            report = await create.build(
                self.envs.engine, self.envs.changes.pip, build, final, spec,
                from_file=from_file, change_id=change_id or secrets.token_hex(8), progress=progress, log=log,
            )  # fmt: skip
            await asyncio.to_thread(
                write_origin, build, source=str(path), source_name=path.name, engine=self.envs.engine.name
            )
            return report

        with claim:
            report = await self.envs.make(final, fill, "the new environment")
        await self.envs.record(final)
        if progress is not None:
            progress(1.0, f"Created '{name}' from {path.name}")
        return CreateResult(environment=await self.envs.summary(name), report=report)

    async def plan(self, name: str, from_file: str, *, progress: ProgressFn | None = None) -> PackagesPlan:
        """What :meth:`create` would install; nothing is made."""
        validate_env_name(name)
        _, spec = await self.read_file(from_file)
        return await create.plan(self.envs.engine, self.envs.changes.pip, name, spec, progress=progress)
