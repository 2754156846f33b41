"""Work the event loop must not wait for, by kind: Python work on one thread, I/O on the default pool.

Threads do not make Python run in parallel: they take turns holding the GIL, and the event loop takes
its turn among them. Walking an environment's 10,000 files, parsing notebooks, papermill's inspection
are Python work; spread over the default pool's threads during a burst of requests, they kept the
loop waiting for the GIL for 100-200 ms at a time (docs/benchmarks.md, event_loop). On one thread, the
loop waits at most a switch interval or two; the work itself takes no longer, since it never ran in
parallel anyway. Plain file and subprocess I/O, which releases the GIL, stays on asyncio.to_thread.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

_python = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gpu-env-python")


async def python_work(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Run ``fn(*args, **kwargs)`` on the thread kept for Python work; wait for it without blocking."""
    call = functools.partial(fn, *args, **kwargs) if kwargs else fn
    return await asyncio.get_running_loop().run_in_executor(_python, call, *(() if kwargs else args))
