"""The two files a kernel host writes into its job's folder, and how either side reads them.

``kernel/host.json`` says where the host's control channel listens and holds its key;
``kernel/connection.json`` is the hosted kernel's own connection file (its ports and message-signing
key). Both are secrets: whoever reads them can run code as the user. They are written owner-only
(0600, in a 0700 folder) and a reader refuses one that group or others could read, so a file that was
ever exposed is never trusted. Everything read is bounded and parsed into a model, as every file of a
job folder is (the notebook's code could have written it).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from ...system.atomic import write_atomic
from ..jobfiles import Damaged, read_model

KERNEL_DIR = "kernel"
HOST_JSON = "host.json"
CONNECTION_JSON = "connection.json"
FORMAT = 1
MAX_FILE = 16 << 10

HexKey = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{32,128}$")]
Port = Annotated[int, Field(ge=1, le=65535)]
Address = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9.:_-]{1,253}$")]


class HostFile(BaseModel):
    """Where a kernel host's control channel listens, and the key that signs what it is sent."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: int = Field(ge=FORMAT, le=FORMAT)
    host: Address
    control_port: Port
    pid: int = Field(ge=1, le=1 << 31)
    started_at: float = Field(ge=0)
    key: HexKey


class ConnectionFile(BaseModel):
    """A hosted kernel's connection file, as jupyter_client writes it (what the server connects with)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    ip: Address
    transport: Annotated[str, StringConstraints(pattern=r"^tcp$")]
    shell_port: Port
    iopub_port: Port
    stdin_port: Port
    control_port: Port
    hb_port: Port
    key: HexKey
    signature_scheme: Annotated[str, StringConstraints(pattern=r"^hmac-sha256$")]

    def info(self) -> dict[str, Any]:
        """The connection info jupyter_client takes (its key as bytes)."""
        return {**self.model_dump(), "key": self.key.encode("ascii")}


def kernel_dir(folder: Path) -> Path:
    return folder / KERNEL_DIR


def make_kernel_dir(folder: Path) -> Path:
    """The owner-only folder the two files live in."""
    path = kernel_dir(folder)
    path.mkdir(mode=0o700, exist_ok=True)
    os.chmod(path, 0o700)  # mkdir's mode is masked by the umask
    return path


def write_private_json(path: Path, data: dict[str, Any]) -> None:
    """Replace ``path`` with ``data``, readable and writable by its owner alone."""
    write_atomic(path, json.dumps(data), mode=0o600)


def _private(path: Path) -> bool:
    try:
        mode = os.stat(path, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return True  # missing: read_model says so
    return stat.S_ISREG(mode) and not mode & 0o077


def read_host(folder: Path) -> HostFile | None:
    """The host's file, None until written; :class:`Damaged` when it is not private or not valid."""
    return _read_private(kernel_dir(folder) / HOST_JSON, HostFile)


def read_connection(folder: Path) -> ConnectionFile | None:
    """The hosted kernel's connection file, None until written; :class:`Damaged` as for the host's."""
    return _read_private(kernel_dir(folder) / CONNECTION_JSON, ConnectionFile)


M = TypeVar("M", bound=BaseModel)


def _read_private(path: Path, model: type[M]) -> M | None:
    if not _private(path):
        raise Damaged(path.name, "others than its owner can read it, so it is not trusted")
    return read_model(path, model, MAX_FILE)
