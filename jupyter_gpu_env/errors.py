"""The project's error hierarchy.

Services raise these; `handlers/base.py` maps them to HTTP once. Each error carries a
message a user can act on and a short machine-readable ``reason``.
"""

from __future__ import annotations

from typing import Any


class GpuEnvError(Exception):
    """Base of every error the library raises on purpose."""

    status: int = 500
    reason: str = "internal_error"

    def __init__(
        self, message: str, *, reason: str | None = None, details: list[dict[str, Any]] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        # What a client may act on besides the sentence (e.g. the kernels that block a deletion).
        self.details = details
        if reason is not None:
            self.reason = reason

    def __str__(self) -> str:
        return self.message


class InvalidRequest(GpuEnvError):
    """The caller sent something malformed or out of range."""

    status = 400
    reason = "invalid_request"


class FileRefused(InvalidRequest, OSError):
    """A file a user named, or found in a folder a user may write, is not read: it is no regular file
    (a named pipe, a device, a socket, a folder) or it is larger than such a file may be
    (``system/untrusted.py``). An OSError too, so that code skipping files it cannot read skips it."""

    reason = "file_refused"


class Forbidden(GpuEnvError):
    """The caller may not do this (for example, change a managed environment)."""

    status = 403
    reason = "forbidden"


class NotFound(GpuEnvError):
    status = 404
    reason = "not_found"


class Conflict(GpuEnvError):
    """The request clashes with the current state (name taken, tool missing, ...)."""

    status = 409
    reason = "conflict"


def kernels_running(subject: str, count: int, details: list[dict[str, Any]]) -> Conflict:
    """409 ``kernels_running``: what is to be removed has kernels (``subject`` names them and where they
    run; ``details`` lists each: ``kernel_id``, ``name``, ``notebook_path``), shut down first on request."""
    them = "it" if count == 1 else "them"
    return Conflict(
        f"{subject}. Shut {them} down first, or ask to shut them down and delete.",
        reason="kernels_running",
        details=details,
    )


class TooLarge(GpuEnvError):
    """The request asks for more than this server accepts in one request."""

    status = 413
    reason = "too_large"


class DiskFull(GpuEnvError):
    """The disk filled up while writing; what was being written was removed."""

    status = 507
    reason = "disk_full"


class Unavailable(GpuEnvError):
    """A backend or tool this request needs cannot be reached right now."""

    status = 503
    reason = "unavailable"


class CommandFailed(GpuEnvError):
    """A subprocess exited non-zero; ``output`` holds the tail of what it printed."""

    status = 502
    reason = "command_failed"

    def __init__(self, argv: list[str], returncode: int, output: str) -> None:
        tail = output.strip()[-2000:]
        super().__init__(f"{argv[0]} exited with status {returncode}" + (f": {tail}" if tail else ""))
        self.argv = argv
        self.returncode = returncode
        self.output = output


class CommandTimeout(GpuEnvError):
    status = 504
    reason = "timeout"


class Cancelled(GpuEnvError):
    """The operation was cancelled by the user."""

    status = 409
    reason = "cancelled"
