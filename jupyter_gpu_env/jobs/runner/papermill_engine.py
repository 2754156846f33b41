"""A papermill engine that reports each finished cell to the runner and lets it stop the kernel.

papermill calls engines through classmethods, so the runner is handed over in a module global: one
runner per process, set before execution starts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from typing import Any, Protocol

from jupyter_core.utils import run_sync
from papermill.clientwrap import PapermillNotebookClient
from papermill.engines import NBClientEngine, NotebookExecutionManager, papermill_engines
from papermill.log import logger
from papermill.utils import merge_kwargs, remove_args


class Watcher(Protocol):
    """What the engine tells the runner (:class:`.runner.Runner` is one) and asks it."""

    def check_stop(self) -> None: ...

    def cell_done(self, nb: Any, index: int) -> None: ...

    def kernel_started(self, pgid: int | None, process: Any = None) -> None: ...


_runner: Watcher | None = None

_SOCKET_PATH_ROOM = 96  # sun_path holds 107 bytes; "/k-" and a port number follow the folder


def register_engine(name: str, runner: Watcher) -> None:
    global _runner
    _runner = runner
    papermill_engines.register(name, _Engine)


class _Manager(NotebookExecutionManager):  # type: ignore[misc]  # papermill has no type hints
    def cell_start(self, cell: Any, cell_index: int | None = None, **kwargs: Any) -> Any:
        if _runner is not None:
            _runner.check_stop()  # a cancel between two cells stops before the next one
        return super().cell_start(cell, cell_index, **kwargs)

    def cell_complete(self, cell: Any, cell_index: int | None = None, **kwargs: Any) -> Any:
        result = super().cell_complete(cell, cell_index, **kwargs)  # saves output.ipynb first
        if _runner is not None and cell_index is not None:
            _runner.cell_done(self.nb, cell_index)
        return result


class _Client(PapermillNotebookClient):  # type: ignore[misc]  # papermill has no type hints
    _ipc_dir: str | None = None

    def create_kernel_manager(self) -> Any:
        km = super().create_kernel_manager()
        # A TCP kernel picks five free ports by binding and releasing them, then starts: another process
        # on the machine (a second job, a Dask worker) can take one in between, and the kernel dies with
        # "Address already in use". An IPython kernel listens on Unix sockets in a folder only this user
        # can open instead: no ports to race for, and nobody else can connect. Other kernels keep TCP
        # (not all of them speak ipc).
        argv = getattr(getattr(km, "kernel_spec", None), "argv", None) or []
        if _runner is None or not any("ipykernel" in str(arg) for arg in argv):
            return km
        try:
            folder = tempfile.mkdtemp(prefix="gpuenv-kernel-")  # 0700
        except OSError:
            return km  # no writable temporary folder: TCP as before
        if len(folder) > _SOCKET_PATH_ROOM:
            os.rmdir(folder)  # a Unix socket's path has ~107 bytes; a long $TMPDIR keeps TCP
            return km
        self._ipc_dir = folder
        km.transport = "ipc"
        km.ip = os.path.join(folder, "k")
        return km

    async def _async_cleanup_kernel(self) -> None:
        try:
            await super()._async_cleanup_kernel()
        finally:
            if self._ipc_dir is not None:
                shutil.rmtree(self._ipc_dir, ignore_errors=True)

    _cleanup_kernel = run_sync(_async_cleanup_kernel)  # the base binds its own coroutine here

    def start_new_kernel(self, **kwargs: Any) -> None:
        # The kernel process's own output (start-up warnings, what C libraries write to fd 2) is not
        # the notebook's: it comes through pipes the runner reads and labels in the log.
        if _runner is not None:
            kwargs.setdefault("stdout", subprocess.PIPE)
            kwargs.setdefault("stderr", subprocess.PIPE)
        super().start_new_kernel(**kwargs)
        if _runner is not None:
            provisioner = getattr(self.km, "provisioner", None)
            pgid = getattr(provisioner, "pgid", None) or getattr(provisioner, "pid", None)
            process = getattr(provisioner, "process", None)
            _runner.kernel_started(pgid, process)


class _Engine(NBClientEngine):  # type: ignore[misc]  # papermill has no type hints
    @classmethod
    def execute_notebook(
        cls,
        nb: Any,
        kernel_name: str,
        output_path: str | None = None,
        progress_bar: bool = True,
        log_output: bool = False,
        autosave_cell_every: int = 30,
        **kwargs: Any,
    ) -> Any:
        # As papermill's Engine.execute_notebook, with our manager in place of its own.
        nb_man = _Manager(
            nb,
            output_path=output_path,
            progress_bar=progress_bar,
            log_output=log_output,
            autosave_cell_every=autosave_cell_every,
        )
        nb_man.notebook_start()
        try:
            cls.execute_managed_notebook(nb_man, kernel_name, log_output=log_output, **kwargs)
        finally:
            nb_man.cleanup_pbar()
            nb_man.notebook_complete()
        return nb_man.nb

    @classmethod
    def execute_managed_notebook(
        cls,
        nb_man: Any,
        kernel_name: str,
        log_output: bool = False,
        stdout_file: Any = None,
        stderr_file: Any = None,
        start_timeout: int = 60,
        execution_timeout: int | None = None,
        **kwargs: Any,
    ) -> Any:
        # As NBClientEngine.execute_managed_notebook, with our client (it reports the kernel's pgid).
        kwargs = remove_args(["input_path"], **kwargs)
        safe_kwargs = remove_args(["timeout", "startup_timeout"], **kwargs)
        final_kwargs = merge_kwargs(
            safe_kwargs,
            timeout=execution_timeout if execution_timeout else kwargs.get("timeout"),
            startup_timeout=start_timeout,
            kernel_name=kernel_name,
            log=logger,
            log_output=log_output,
            stdout_file=stdout_file,
            stderr_file=stderr_file,
        )
        return _Client(nb_man, **final_kwargs).execute()
