"""Helpers shared by the tests: waiting for a condition (never a fixed sleep), notebooks, the REST API.

Import them by name (``from helpers import wait_until``): the root conftest puts ``tests/`` on the
import path and registers this module for pytest's assertion rewriting.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import time
import zipfile
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import nbformat
import pytest
from tornado.httpclient import HTTPClientError

from jupyter_gpu_env.jobs.service import JobService
from jupyter_gpu_env.models.jobs import Job

T = TypeVar("T")

What = str | Callable[[], str]


def _say(what: What) -> str:
    return what() if callable(what) else what


# ----- waiting ------------------------------------------------------------------------------------


async def wait_until(
    check: Callable[[], T | Awaitable[T]],
    *,
    within: float = 30.0,
    every: float = 0.05,
    what: What = "the condition",
) -> T:
    """Poll ``check`` (sync or async) until it returns something truthy, and return that.

    Fails after ``within`` seconds saying ``what`` did not happen (``what`` may be a callable, asked
    only then, to describe the last state seen).
    """
    deadline = time.monotonic() + within
    while True:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value  # type: ignore[return-value]
        if time.monotonic() > deadline:
            raise AssertionError(f"{_say(what)} did not happen within {within:g} s")
        await asyncio.sleep(every)


def wait_until_sync(
    check: Callable[[], T],
    *,
    within: float = 30.0,
    every: float = 0.05,
    what: What = "the condition",
) -> T:
    """:func:`wait_until` for synchronous tests and fixtures: blocks this thread between polls."""
    deadline = time.monotonic() + within
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{_say(what)} did not happen within {within:g} s")
        time.sleep(every)


def ended(job: Any) -> bool:
    """Whether a job (a ``Job`` or its JSON) has reached a final state."""
    state = job["state"] if isinstance(job, dict) else job.state
    return state in ("succeeded", "failed", "cancelled")


async def wait_for_job(
    svc: Any, job_id: str, done: Callable[[Any], bool], *, within: float = 60.0, every: float = 0.2
) -> Any:
    """Refresh a ``JobService`` until ``done(job)``, and return the job; fail with its last state."""
    last: list[Any] = []

    async def check() -> Any:
        await svc.refresh()
        job = await svc.get(job_id)
        last[:] = [job]
        return job if done(job) else None

    def state() -> str:
        job = last[0] if last else None
        if job is None:
            return f"job {job_id} reaching the state waited for"
        why = " / ".join(str(s) for s in (job.message, job.pending_reason) if s)
        return f"job {job_id} (now {job.state}: {why}) reaching the state waited for"

    return await wait_until(check, within=within, every=every, what=state)


async def wait_for_sweep(svc: Any, group_id: str, *, within: float = 120.0, every: float = 0.2) -> Any:
    """Refresh a ``JobService`` until the sweep ``group_id`` has ended (neither queued nor running), and
    return the sweep."""

    async def check() -> Any:
        await svc.refresh()
        group = await svc.sweeps.get(group_id)
        return group if group.state not in ("queued", "running") else None

    return await wait_until(check, within=within, every=every, what=f"sweep {group_id} ending")


# ----- notebooks ----------------------------------------------------------------------------------


def notebook(
    cells: Iterable[str],
    *,
    parameters: str | None = None,
    kernel: str = "python3",
    heading: str | None = None,
    results: str | None = None,
) -> nbformat.NotebookNode:
    """A notebook of code ``cells`` for ``kernel``: after an optional markdown ``heading`` cell, and a
    ``parameters`` cell (tagged ``parameters``, as papermill reads it) when given; last, a cell tagged
    ``results`` (what a sweep's results table shows of a run) when given."""
    nb = nbformat.v4.new_notebook()
    display = "Python 3" if kernel == "python3" else kernel
    nb.metadata["kernelspec"] = {"name": kernel, "display_name": display, "language": "python"}
    if heading is not None:
        nb.cells.append(nbformat.v4.new_markdown_cell(heading))
    if parameters is not None:
        cell = nbformat.v4.new_code_cell(parameters)
        cell.metadata["tags"] = ["parameters"]
        nb.cells.append(cell)
    nb.cells.extend(nbformat.v4.new_code_cell(src) for src in cells)
    if results is not None:
        cell = nbformat.v4.new_code_cell(results)
        cell.metadata["tags"] = ["results"]
        nb.cells.append(cell)
    return nb


def write_notebook(
    root: Path | str,
    name: str,
    cells: Iterable[str],
    *,
    parameters: str | None = None,
    kernel: str = "python3",
    heading: str | None = None,
    results: str | None = None,
) -> str:
    """Write :func:`notebook` to ``root / name`` (folders made as needed); return ``name``, the path a
    job request names."""
    path = Path(root) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    nb = notebook(cells, parameters=parameters, kernel=kernel, heading=heading, results=results)
    nbformat.write(nb, path)
    return name


def printed(path: Path | str) -> str:
    """What the code cells of an executed notebook printed (their stream outputs), joined."""
    nb = nbformat.read(path, as_version=4)
    return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))


# ----- the command line (with pytest's ``capsys``) --------------------------------------------------


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run ``jupyter gpu-env *argv`` in this process; its exit code, what it printed and what it said."""
    from jupyter_gpu_env.cli import main  # the command line's modules only for the tests that run it

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ----- the REST API (with the ``api`` and ``jp_fetch`` fixtures) -----------------------------------


async def body(resp: Any) -> Any:
    return json.loads(resp.body)


async def error(call: Awaitable[Any], code: int) -> Any:
    """Await a request that must fail with HTTP ``code``; return its JSON error body."""
    with pytest.raises(HTTPClientError) as e:
        await call
    assert e.value.code == code, e.value.response.body
    return json.loads(e.value.response.body)


async def wait_task(api: Any, task_id: str, timeout: float = 120) -> Any:
    """Follow ``GET tasks/{id}`` until the task has ended; return it."""
    last: list[Any] = []

    async def check() -> Any:
        task = await body(await api("tasks", task_id))
        last[:] = [task]
        return task if task["state"] not in ("pending", "running") else None

    return await wait_until(
        check, within=timeout, every=0.1, what=lambda: f"task {task_id} ending (last seen: {last})"
    )


async def wait_job(api: Any, job_id: str, timeout: float = 120) -> Any:
    """Follow ``GET jobs/{id}`` until the job has ended; return it."""
    last: list[Any] = []

    async def check() -> Any:
        job = await body(await api("jobs", job_id))
        last[:] = [job]
        return job if ended(job) else None

    return await wait_until(
        check, within=timeout, every=0.1, what=lambda: f"job {job_id} ending (last seen: {last})"
    )


async def clone(api: Any, name: str, source: str = "demo") -> Any:
    """``POST environments`` (clone ``source`` as ``name``) and wait for its task; return the task."""
    resp = await api("environments", method="POST", body=json.dumps({"source": source, "name": name}))
    assert resp.code == 202
    task = await body(resp)
    assert resp.headers["Location"].endswith(f"/gpu-env/api/tasks/{task['id']}")
    return await wait_task(api, task["id"])


async def run_code(jp_fetch: Any, jp_serverapp: Any, kernel_name: str, code: str) -> str:
    """Start a kernel through the server's kernel API, run ``code``, return what it printed."""
    resp = await jp_fetch("api", "kernels", method="POST", body=json.dumps({"name": kernel_name}))
    started = await body(resp)
    client = jp_serverapp.kernel_manager.get_kernel(started["id"]).client()
    client.start_channels()
    try:
        await client._async_wait_for_ready(timeout=60)
        msg_id = client.execute(code)
        out = ""
        while True:
            reply = await client._async_get_iopub_msg(timeout=30)
            if reply["parent_header"].get("msg_id") != msg_id:
                continue
            if reply["msg_type"] == "stream":
                out += reply["content"]["text"]
            if reply["msg_type"] == "error":
                raise AssertionError("\n".join(reply["content"]["traceback"]))
            if reply["msg_type"] == "status" and reply["content"]["execution_state"] == "idle":
                return out
    finally:
        client.stop_channels()
        await jp_fetch("api", "kernels", started["id"], method="DELETE")


async def start_session(jp_fetch: Any, kernel_name: str, path: str) -> str:
    """A notebook session with a running kernel, as JupyterLab opens one; returns the kernel's id."""
    resp = await jp_fetch(
        "api",
        "sessions",
        method="POST",
        body=json.dumps({"path": path, "type": "notebook", "name": path, "kernel": {"name": kernel_name}}),
    )
    return (await body(resp))["kernel"]["id"]


def stopped_after(
    make: Callable[..., JobService], loop: asyncio.AbstractEventLoop
) -> Iterator[Callable[..., JobService]]:
    """A fixture's body (``yield from``): ``make`` for the test to call, each JobService it made stopped
    after the test on ``loop``, the test's (its jobs keep running; the backends and the store are released)."""
    made: list[JobService] = []

    def tracked(*args: Any, **kwargs: Any) -> JobService:
        svc = make(*args, **kwargs)
        made.append(svc)
        return svc

    yield tracked
    for svc in made:
        loop.run_until_complete(svc.stop())


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def make_wheel(folder: Path, name: str, version: str, *, value: str) -> Path:
    """A pure-Python wheel with one module and one console script, written by hand (no build tools)."""
    info = f"{name}-{version}.dist-info"
    files = {
        f"{name}.py": f"VALUE = {value!r}\n\ndef main():\n    print('hello from', VALUE)\n".encode(),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{info}/entry_points.txt": f"[console_scripts]\n{name}-hello = {name}:main\n".encode(),
    }
    record = "".join(f"{path},{_digest(data)},{len(data)}\n" for path, data in files.items())
    files[f"{info}/RECORD"] = (record + f"{info}/RECORD,,\n").encode()
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for path, data in files.items():
            z.writestr(path, data)
    return wheel


def job_record(job_id: str, folder: str | None = None, **fields: Any) -> Job:
    """A job's record as a submission makes it, its files in ``folder`` (default ``jobs/<id>``);
    ``fields`` set the rest (name, backend, state, resources, a sweep's ``group_id``...)."""
    folder = folder or f"jobs/{job_id}"
    record: dict[str, Any] = {
        "id": job_id,
        "name": job_id,
        "backend": "local",
        "state": "queued",
        "notebook_path": "nb.ipynb",
        "job_dir": folder,
        "input_path": f"{folder}/input.ipynb",
        "output_path": f"{folder}/output.ipynb",
        "log_path": f"{folder}/log.txt",
        "created_at": 0.0,
    }
    return Job(**{**record, **fields})


def run_record(index: int, **fields: Any) -> Job:
    """Run ``index`` of the sweep ``abcdef012345`` of ``train``, varying ``alpha``."""
    return job_record(
        f"{index:012x}", name=f"train [alpha={index}]", group_id="abcdef012345", group_index=index, **fields
    )


class Recorder:
    """A reporter (``progress`` and ``log``, as a task's context and a progress bar have them) that
    keeps what it is told; ``on_progress(fraction, message)`` is called too, to act at a given moment."""

    def __init__(self, on_progress=None) -> None:
        self.seen: list[tuple[float, str]] = []
        self.lines: list[str] = []
        self.on_progress = on_progress

    @property
    def fractions(self) -> list[float]:
        return [f for f, _ in self.seen]

    @property
    def messages(self) -> list[str]:
        return [m for _, m in self.seen]

    def progress(self, fraction: float, message: str) -> None:
        self.seen.append((fraction, message))
        if self.on_progress is not None:
            self.on_progress(fraction, message)

    def log(self, line: str) -> None:
        self.lines.append(line)


# ----- Kubernetes without a cluster --------------------------------------------------------------


@contextlib.contextmanager
def kmock_server(loop: asyncio.AbstractEventLoop) -> Iterator[Any]:
    """A kmock Kubernetes emulator with its API server on loopback, run on ``loop`` (pytest-jupyter's,
    ``jp_asyncio_loop``) until the block ends; the test skips where kmock is not installed."""
    kmock = pytest.importorskip("kmock")
    emulator = kmock.KubernetesEmulator()
    server = kmock.Server(emulator)
    loop.run_until_complete(emulator.__aenter__())
    loop.run_until_complete(server.__aenter__())
    try:
        yield emulator
    finally:
        loop.run_until_complete(server.__aexit__(None, None, None))
        loop.run_until_complete(emulator.__aexit__(None, None, None))


def import_cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The groups of nodes that reach each other (strongly connected components of more than one node,
    Tarjan's algorithm, iterative): module or folder cycles, for the layout tests of both halves."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found
