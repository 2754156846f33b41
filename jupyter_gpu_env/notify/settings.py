"""The user's notification choices, kept by the server in ``state_dir/notifications.json``.

Written whole in one rename (:mod:`..system.atomic`), read and written on a worker thread. A file that
cannot be read (absent, damaged, from a later version) is the defaults, and says so in the log.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from pydantic import ValidationError

from ..models.automation.notifications import NotificationSettings
from ..system.atomic import write_atomic

log = logging.getLogger(__name__)

FILE_NAME = "notifications.json"
MAX_BYTES = 64 << 10


class SettingsFile:
    """One JSON file of :class:`NotificationSettings`; the last one read or written is kept in memory."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._current: NotificationSettings | None = None
        self._lock = asyncio.Lock()

    async def get(self) -> NotificationSettings:
        if self._current is None:
            self._current = await asyncio.to_thread(self._read)
        return self._current

    async def put(self, settings: NotificationSettings) -> NotificationSettings:
        async with self._lock:  # two PUTs at once: each writes whole, the last one stands
            await asyncio.to_thread(self._write, settings)
            self._current = settings
        return settings

    def _read(self) -> NotificationSettings:
        try:
            with self.path.open("rb") as f:
                raw = f.read(MAX_BYTES + 1)
        except FileNotFoundError:
            return NotificationSettings()
        except OSError as e:
            log.warning("notification settings %s could not be read (%s); using the defaults", self.path, e)
            return NotificationSettings()
        try:
            if len(raw) > MAX_BYTES:
                raise ValueError(f"larger than {MAX_BYTES} bytes")
            return NotificationSettings.model_validate_json(raw)
        except (ValidationError, ValueError) as e:
            log.warning("notification settings %s are damaged (%s); using the defaults", self.path, e)
            return NotificationSettings()

    def _write(self, settings: NotificationSettings) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, settings.model_dump_json(indent=2), durable=True, mode=0o600)
