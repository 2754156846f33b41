"""An environment's folder is its owner's: named pipes planted in it never hold a reader, and never end
an operation with a 500. Each read here used to wait for a writer for ever (a thread of the default
pool each: seven of them stopped history, export and clone until a restart)."""

import asyncio
import contextlib
import os

import pytest
from conda_fixtures import run_sync

from jupyter_gpu_env.envs.changes.history import HISTORY_FILE
from jupyter_gpu_env.envs.export import environment_yaml
from jupyter_gpu_env.models.envs import ExportFormat

# Long enough for any answer on a busy machine; the bug waited for ever.
PATIENCE = 30


@pytest.fixture
def planted(service):
    """The user's clone 'mine' with named pipes where readers look: a package record, the history, a
    distribution's METADATA, an activation script and an untracked file."""
    run_sync(service.clone("demo", "mine"))
    prefix = service.user_env_dir / "mine"
    history = prefix / "conda-meta" / HISTORY_FILE
    history.unlink(missing_ok=True)
    site = next((prefix / "lib").glob("python3*/site-packages"))
    (site / "planted-1.0.dist-info").mkdir()
    pipes = [
        prefix / "conda-meta" / "planted-1.0-0.json",
        history,
        site / "planted-1.0.dist-info" / "METADATA",
        prefix / "etc" / "conda" / "activate.d" / "planted.sh",
        prefix / "share" / "planted-pipe",
    ]
    for pipe in pipes:
        os.mkfifo(pipe)
    yield prefix
    release(pipes)


def release(pipes):
    """Let go of any reader stuck on one of ``pipes`` (the bug guarded against), for good: each gets a
    writer (its open returns), the pipe is removed (no later open finds it), the writer closes (its
    read ends)."""
    held = []
    for pipe in pipes:
        with contextlib.suppress(OSError):
            held.append(os.open(pipe, os.O_RDWR | os.O_NONBLOCK))
        with contextlib.suppress(OSError):
            pipe.unlink()
    for fd in held:
        os.close(fd)


async def test_reading_an_environment_skips_its_named_pipes(service, planted):
    detail = await asyncio.wait_for(service.get("mine"), PATIENCE)
    names = {p.name for p in detail.packages}
    assert "python" in names and "planted" not in names
    history = await asyncio.wait_for(service.history("mine"), PATIENCE)
    assert history.changes == []
    exported = await asyncio.wait_for(service.export("mine", ExportFormat.yaml), PATIENCE)
    assert exported.content == environment_yaml(planted, "mine") and "planted" not in exported.content
    info = await asyncio.wait_for(service.register_kernel("mine"), PATIENCE)
    assert info.kernel_name


async def test_a_clone_and_a_change_carry_on_past_its_named_pipes(service, planted):
    made = await asyncio.wait_for(service.clone("mine", "again"), PATIENCE)
    assert "share/planted-pipe" in made.report.unreadable
    assert not (service.user_env_dir / "again" / "share" / "planted-pipe").exists()
    changed = await asyncio.wait_for(service.change_packages("mine", ["tabulate"], []), PATIENCE)
    assert any(p.startswith("tabulate-") for p in changed.report.installed)
