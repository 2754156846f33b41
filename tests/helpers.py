"""Helpers shared by the tests: waiting for a condition (never a fixed sleep)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def wait_until(
    check: Callable[[], T | Awaitable[T]],
    *,
    within: float = 30.0,
    every: float = 0.05,
    what: str = "the condition",
) -> T:
    """Poll ``check`` (sync or async) until it returns something truthy; fail after ``within`` seconds."""
    deadline = time.monotonic() + within
    while True:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value  # type: ignore[return-value]
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {within:g} s")
        await asyncio.sleep(every)
