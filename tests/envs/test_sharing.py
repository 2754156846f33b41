"""Environments shared with the team: published into a shared folder as a read-only copy that runs at its
new place, seen by a teammate's server, cloned from there, and unpublished by its owner only."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from helpers import Recorder

from jupyter_gpu_env.envs import sharing
from jupyter_gpu_env.envs.catalog.prefix import ORIGIN_FILE
from jupyter_gpu_env.errors import Conflict, Forbidden
from jupyter_gpu_env.models.envs import PublishRequest


@pytest.fixture
def shared_dir(tmp_path) -> Path:
    d = tmp_path / "team"
    d.mkdir()
    d.chmod(0o3775)
    return d


async def test_publish_list_clone_unpublish(demo, tmp_path, make_service, shared_dir, env_dir_entries):
    me = make_service(demo, tmp_path / "me", shared=[shared_dir])
    await me.clone("demo", "mine")
    assert me.sharing_enabled
    told = Recorder()
    published = await me.publish("mine", PublishRequest(description="CPU demo + six"), report=told)
    progress = told.fractions
    prefix = shared_dir / "mine"
    assert published.kind == "shared" and published.prefix == str(prefix)
    assert published.name == "mine@team"  # the user's own "mine" keeps the plain name
    assert (published.owner, published.description, published.can_unpublish) == (
        sharing.user_name(),
        "CPU demo + six",
        True,
    )
    assert progress[-1] == 1.0 and env_dir_entries(shared_dir) == ["mine"]
    # It runs where it was published, and no one but its owner can write to any of it.
    out = subprocess.run(
        [str(prefix / "bin" / "python"), "-c", "import sys, six; print(sys.prefix)"],
        capture_output=True,
        text=True,
    )
    assert out.stdout.strip() == str(prefix)
    for root, dirs, files in os.walk(prefix):
        for name in [*dirs, *files]:
            mode = os.lstat(os.path.join(root, name)).st_mode
            if not stat.S_ISLNK(mode):
                assert mode & 0o022 == 0, os.path.join(root, name)
    assert os.stat(prefix / "bin" / "python").st_mode & 0o005 == 0o005  # the team can run it

    # A teammate's server lists it under its plain name and clones it like a managed one.
    mate = make_service(demo, tmp_path / "mate", shared=[shared_dir])
    listed = {e.name: e for e in await mate.list()}
    assert listed["mine"].kind == "shared" and listed["mine"].description == "CPU demo + six"
    assert listed["mine"].made_from == "share"
    res = await mate.clone("mine", "from-team")
    assert res.environment.source_name == "mine"
    clone = mate.user_env_dir / "from-team"
    assert subprocess.run([str(clone / "bin" / "python"), "-c", "import six"]).returncode == 0
    with pytest.raises(Forbidden, match="shared with the team.*Clone it"):
        await mate.change_packages("mine", ["tabulate"], [])

    # Unpublishing removes it whole; the clones made from it stay.
    await me.unpublish(await me.resolve(str(prefix)))
    assert env_dir_entries(shared_dir) == []
    assert "mine@team" not in {e.name for e in await me.list()}
    assert clone.is_dir()


async def test_only_the_owner_unpublishes(demo, tmp_path, make_service, shared_dir, monkeypatch):
    me = make_service(demo, tmp_path / "me", shared=[shared_dir])
    await me.clone("demo", "mine")
    await me.publish("mine", PublishRequest(description="mine", name="team-env"))
    loc = await me.resolve("team-env")
    monkeypatch.setattr(sharing.os, "getuid", lambda: os.stat(shared_dir).st_uid + 4242)
    with pytest.raises(Forbidden, match="'team-env' was shared by .*; only they can unpublish it") as e:
        await me.unpublish(loc)
    assert e.value.reason == "not_owner"
    monkeypatch.undo()
    assert (shared_dir / "team-env").is_dir()


async def test_publishing_is_refused_clearly(demo, tmp_path, make_service, shared_dir):
    off = make_service(demo, tmp_path / "off")
    await off.clone("demo", "mine")
    with pytest.raises(Forbidden, match="shared_env_dirs") as e:
        await off.publishing("mine")
    assert e.value.reason == "sharing_disabled"

    me = make_service(demo, tmp_path / "me", shared=[shared_dir])
    await me.clone("demo", "mine")
    with pytest.raises(Forbidden, match="managed environment"):
        await me.publishing("demo")
    await me.publish("mine", PublishRequest(description="first"))
    with pytest.raises(Conflict, match=f"already shared by {sharing.user_name()}") as c:
        await me.publishing("mine")
    assert c.value.reason == "env_exists"
    missing = make_service(demo, tmp_path / "x", shared=[tmp_path / "nowhere"])
    await missing.clone("demo", "mine")
    with pytest.raises(Conflict, match="does not exist or you cannot write to it"):
        await missing.publishing("mine")


async def test_unpublishing_a_planted_link_removes_the_link_only(
    demo, tmp_path, make_service, shared_dir, env_dir_entries
):
    """A link in the shared folder (anyone on the team may add one) pointing at one of this user's
    environments elsewhere: unpublishing it removes the link, never what it points to."""
    me = make_service(demo, tmp_path / "me", shared=[shared_dir])
    elsewhere = make_service(demo, tmp_path / "elsewhere")
    await elsewhere.clone("demo", "precious")
    precious = elsewhere.user_env_dir / "precious"
    before = sorted(str(p.relative_to(precious)) for p in precious.rglob("*"))
    (shared_dir / "planted").symlink_to(precious)
    loc = await me.resolve("planted")
    assert loc.kind == "shared"
    await me.unpublish(loc)
    assert sorted(str(p.relative_to(precious)) for p in precious.rglob("*")) == before
    assert subprocess.run([str(precious / "bin" / "python"), "-c", "import six"]).returncode == 0
    assert env_dir_entries(shared_dir) == [] and env_dir_entries(elsewhere.user_env_dir) == ["precious"]


async def test_a_published_copy_is_never_more_open_than_its_source(demo, tmp_path, make_service, shared_dir):
    me = make_service(demo, tmp_path / "me", shared=[shared_dir])
    await me.clone("demo", "mine")
    source = me.user_env_dir / "mine"
    private = source / "share" / "private"
    private.mkdir()
    (private / "token").write_text("s3cret")
    (source / "share" / "team-only.txt").write_text("for the group")
    (source / "share" / "open.txt").write_text("for all")
    modes = {"share/private": 0o700, "share/private/token": 0o600, "share/team-only.txt": 0o640}
    modes["share/open.txt"] = 0o664
    for rel, mode in modes.items():
        (source / rel).chmod(mode)
    await me.publish("mine", PublishRequest(description="private files stay private"))
    published = shared_dir / "mine"
    assert (published / "share" / "private" / "token").read_text() == "s3cret"
    got = {rel: os.lstat(published / rel).st_mode & 0o777 for rel in modes}
    # As open as the source at most, and never writable by the team.
    assert got == {**modes, "share/open.txt": 0o644}
    for root, dirs, files in os.walk(published):
        for name in [*dirs, *files]:
            path = Path(root, name)
            mode = os.lstat(path).st_mode
            mine = source / path.relative_to(published)
            if stat.S_ISLNK(mode) or not (mine.exists() or mine.is_symlink()):
                continue
            assert mode & 0o077 & ~os.lstat(mine).st_mode == 0, path


async def test_the_owner_shown_is_the_folders_not_what_its_files_say(
    demo, tmp_path, make_service, shared_dir, monkeypatch
):
    """The origin file is the publisher's to edit: a teammate could write anyone's name into it. Who
    published an environment, and who may unpublish it, is the shared folder's owner."""
    me = make_service(demo, tmp_path / "me", shared=[shared_dir])
    await me.clone("demo", "mine")
    await me.publish("mine", PublishRequest(description="honest"))
    origin = shared_dir / "mine" / "conda-meta" / ORIGIN_FILE
    forged = {**json.loads(origin.read_text()), "owner": "the-boss", "owner_uid": os.getuid() + 4242}
    origin.write_text(json.dumps(forged))
    mate = make_service(demo, tmp_path / "mate", shared=[shared_dir])
    listed = {e.name: e for e in await mate.list()}["mine"]
    assert (listed.owner, listed.can_unpublish) == (sharing.user_name(), True)
    with pytest.raises(Conflict, match=f"already shared by {sharing.user_name()};"):
        await me.publishing("mine")
    # Seen by another user, the folder is not theirs, whatever the file says.
    monkeypatch.setattr(sharing.os, "getuid", lambda: os.stat(shared_dir).st_uid + 4242)
    forged["owner_uid"] = os.getuid()
    origin.write_text(json.dumps(forged))
    listed = {e.name: e for e in await make_service(demo, tmp_path / "x", shared=[shared_dir]).list()}["mine"]
    assert listed.can_unpublish is False and listed.owner != "the-boss"


def _building(folder: Path, name: str) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.startswith(f".{name}.partial-") and p.suffix != ".lock"]


async def test_a_second_server_sweeps_only_the_publishes_no_live_process_works_on(
    demo, tmp_path, make_service, shared_dir, victims, env_dir_entries
):
    """Two servers of one user (JupyterHub's named servers), one folder to share in: the second one's
    start finds the first one's publish in progress and leaves it be; one left by a killed process goes."""
    home = tmp_path / "me"
    me = make_service(demo, home, shared=[shared_dir])
    await me.clone("demo", "mine")
    publish = {"action": "publish", "shared": [str(shared_dir)], "pause": "BUILDING"}
    first = victims(home, "mine", tmp_path / "tasks.json", **publish, **{"as": "team-env"})
    first.until("BUILDING")  # paused, alive, with its copy half built under the shared name
    (building,) = _building(shared_dir, "team-env")
    second = make_service(demo, home, shared=[shared_dir])
    assert await second.cleanup_stale() == []
    assert building.is_dir()
    first.resume()
    assert first.until("DONE").startswith("DONE succeeded"), first.seen
    assert env_dir_entries(shared_dir) == ["team-env"]

    killed = victims(home, "mine", tmp_path / "tasks.json", **publish, **{"as": "gone-env"})
    killed.until("BUILDING")
    killed.kill()
    (left,) = _building(shared_dir, "gone-env")
    assert await second.cleanup_stale() == [left]
    assert env_dir_entries(shared_dir) == ["team-env"]
