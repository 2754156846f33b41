import asyncio
import dataclasses
import json
import shutil
import subprocess

import pytest
from helpers import Recorder

from jupyter_gpu_env import kernelspecs
from jupyter_gpu_env.envs import conda_list
from jupyter_gpu_env.envs.catalog.prefix import ORIGIN_FILE
from jupyter_gpu_env.envs.claims import LOCK_DIR
from jupyter_gpu_env.errors import Conflict, Forbidden, InvalidRequest, NotFound


def _entries(path):
    """What a folder of environments holds, less the lock files of claims (they are kept on purpose)."""
    return sorted(p.name for p in path.iterdir() if p.name != LOCK_DIR) if path.exists() else []


async def test_clone_relinks_packages_by_hardlink(cloned, demo):
    src = demo.env / "lib" / "python3.11" / "os.py"
    dst = cloned.prefix / "lib" / "python3.11" / "os.py"
    s, d = src.stat(), dst.stat()
    assert s.st_ino == d.st_ino and d.st_nlink >= 3  # package cache, managed env, clone
    assert not dst.is_symlink()
    report = cloned.result.report
    assert report.packages >= 30 and report.fetched == [] and report.copied_from_source == []
    env = cloned.result.environment
    assert env.name == "mine" and env.kind == "own" and env.prefix == str(cloned.prefix)
    assert env.source == str(demo.env) and env.source_name == "demo" and env.created_at
    assert env.made_from == "clone"
    assert env.size_state == "measuring"  # the clone answers without walking what it made
    # new disk use of a clone is a small part of its size: the packages are shared with the cache
    detail = await cloned.service.get("mine")
    assert detail.size_state == "measured" and detail.shared_bytes > 0.8 * detail.size_bytes


def test_clone_carries_pip_package_and_runs_in_the_clone(cloned):
    out = subprocess.run(
        [
            str(cloned.prefix / "bin" / "python"),
            "-c",
            "import six, sys; print(sys.prefix); print(six.__file__)",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert out[0] == str(cloned.prefix)
    assert out[1].startswith(str(cloned.prefix))
    assert cloned.result.report.untracked_files >= 5


async def test_clone_rewrites_prefix_in_text_but_not_binary(cloned, demo):
    notes = (cloned.prefix / "share" / "demo" / "notes.txt").read_text()
    assert notes == f"data lives in {cloned.prefix}/share/demo\n"
    assert (cloned.prefix / "share" / "demo" / "blob.bin").read_bytes() == (
        demo.env / "share" / "demo" / "blob.bin"
    ).read_bytes()
    assert "share/demo/blob.bin" in cloned.result.report.binary_with_prefix
    assert cloned.result.report.rewritten_files >= 1
    # shebangs of conda-linked entry points point at the clone, not the source or a temporary
    assert (cloned.prefix / "bin" / "jupyter-kernel").read_text().splitlines()[
        0
    ] == f"#!{cloned.prefix}/bin/python3.11"


async def test_clone_is_recorded_for_conda_and_listed_as_own(cloned):
    svc = cloned.service
    assert conda_list.read(svc.conda_list_path) == [cloned.prefix]
    origin = json.loads((cloned.prefix / "conda-meta" / ORIGIN_FILE).read_text())
    assert origin["source_name"] == "demo" and origin["engine"] == "rattler"
    names = {e.name: e for e in await svc.list()}
    assert names["mine"].kind == "own" and names["demo"].kind == "managed"
    assert not [n for n in _entries(svc.user_env_dir) if n.startswith(".")]


@pytest.mark.parametrize("bad", ["../x", "/abs", "", "a\x01b", "x" * 65, ".hidden", "two words"])
async def test_clone_bad_names_are_400(service, bad):
    with pytest.raises(InvalidRequest) as e:
        await service.clone("demo", bad)
    assert e.value.status == 400
    assert _entries(service.user_env_dir) == []


async def test_clone_unknown_source_is_404(service):
    with pytest.raises(NotFound) as e:
        await service.clone("nope", "x")
    assert "demo" in e.value.message  # says which environments exist
    with pytest.raises(NotFound):
        await service.clone("/usr", "x")  # a path that is not a known environment


async def test_clone_existing_name_is_409(cloned):
    with pytest.raises(Conflict) as e:
        await cloned.service.clone("demo", "mine")
    assert e.value.status == 409
    with pytest.raises(Conflict):
        await cloned.service.clone("mine", "demo")  # a managed environment's name


async def test_a_change_is_one_handle_held_by_a_block_or_handed_to_an_operation(service):
    new = await service.making("handle", "demo")  # awaited: the caller owns it, as a task does
    assert (new.name, new.prefix, new.env.kind) == ("handle", service.user_env_dir / "handle", "own")
    assert new.source is not None and new.source.name == "demo" and service.busy("handle")
    await service.clone(new)  # handed over: the clone releases it when it ends
    assert not service.busy("handle")

    with pytest.raises(RuntimeError):
        async with service.changing("handle") as change:
            assert change.prefix == service.user_env_dir / "handle" and service.busy("handle")
            raise RuntimeError("the block failed")
    assert not service.busy("handle")  # released on the way out, whatever happened

    handed = await service.changing(str(service.user_env_dir / "handle"))  # found by its prefix too
    with pytest.raises(Conflict, match="in progress"):
        await service.changing("handle")
    assert await service.delete(handed) is None
    assert not service.busy("handle") and not (service.user_env_dir / "handle").exists()
    handed.release()  # idempotent


async def test_fail_fast_checks(cloned, service):
    change = await cloned.service.making("other", "demo")
    assert change.source is not None and change.source.name == "demo" and change.name == "other"
    with pytest.raises(Conflict, match="being made or changed right now"):
        await cloned.service.making("other", "demo")
    change.release()
    with pytest.raises(Conflict, match="already exists"):
        await cloned.service.making("mine", "demo")
    with pytest.raises(InvalidRequest):
        await cloned.service.making("../x", "demo")
    with pytest.raises(NotFound):
        await cloned.service.making("x", "nope")
    assert not cloned.service.busy("x") and not cloned.service.busy("mine")
    async with cloned.service.changing("mine") as change:
        assert change.name == "mine" and cloned.service.busy("mine")
    assert not cloned.service.busy("mine")
    with pytest.raises(Forbidden):
        await cloned.service.changing("demo")

    gate = asyncio.Event()

    def progress(fraction, message):
        gate.set()

    task = asyncio.ensure_future(service.clone("demo", "busy", report=Recorder(progress)))
    await gate.wait()
    with pytest.raises(Conflict, match="right now"):
        await service.making("busy", "demo")
    await task
    with pytest.raises(Conflict, match="already exists"):
        await service.making("busy", "demo")


async def test_clone_by_prefix(service, demo):
    res = await service.clone(str(demo.env), "byprefix")
    assert res.environment.source_name == "demo"


@pytest.mark.parametrize("when", ["Linking", "Copying untracked files"])
async def test_cancel_mid_clone_leaves_nothing(service, when):
    seen = []
    task = None

    def progress(fraction, message):
        seen.append(message)
        if message.startswith(when) and not task.cancelled():
            task.cancel()

    task = asyncio.ensure_future(service.clone("demo", "cancelled", report=Recorder(progress)))
    with pytest.raises(asyncio.CancelledError):
        await task
    assert any(m.startswith(when) for m in seen)
    assert _entries(service.user_env_dir) == []
    assert conda_list.read(service.conda_list_path) == []
    assert "cancelled" not in {e.name for e in await service.list()}


async def test_stale_temporaries_are_removed_at_start(service):
    stale = service.user_env_dir / ".old.partial-0a1b2c3d"
    (stale / "conda-meta").mkdir(parents=True)
    (service.user_env_dir / ".gone.deleting-ff00").mkdir()
    keep = service.user_env_dir / ".config"
    keep.mkdir()
    removed = await service.cleanup_stale()
    assert sorted(p.name for p in removed) == [".gone.deleting-ff00", ".old.partial-0a1b2c3d"]
    assert _entries(service.user_env_dir) == [".config"]


async def test_managed_environments_cannot_be_changed_or_deleted(service):
    with pytest.raises(Forbidden):
        await service.change_packages("demo", ["tabulate"], [])
    with pytest.raises(Forbidden):
        await service.delete("demo")


async def test_delete_own_environment(service, demo):
    await service.clone("demo", "todelete")
    prefix = service.user_env_dir / "todelete"
    info = await service.register_kernel("todelete")
    assert kernelspecs.find_for_prefix(prefix, service.kernel_data_dir) is not None
    removed_kernel = await service.delete("todelete")
    assert removed_kernel == info.kernel_name
    assert not prefix.exists() and _entries(service.user_env_dir) == []
    assert conda_list.read(service.conda_list_path) == []
    assert kernelspecs.list_registered(service.kernel_data_dir) == []
    assert (demo.env / "bin" / "python").exists()  # the source is untouched
    with pytest.raises(NotFound):
        await service.delete("todelete")


async def test_package_cache_miss_copies_from_source_even_without_its_channel(demo, tmp_path):
    """A managed env made elsewhere: packages missing from our cache come from the source, not fetched."""
    from jupyter_gpu_env.demo.condapkg import PLACEHOLDER, write_package
    from jupyter_gpu_env.envs.rattler.engine import RattlerEngine

    channel = tmp_path / "channel"
    stage = tmp_path / "stage"
    (stage / "share" / "hello").mkdir(parents=True)
    (stage / "share" / "hello" / "where.txt").write_text(f"installed in {PLACEHOLDER}\n")
    (stage / "share" / "hello" / "data.bin").write_bytes(b"\0\1\2")
    index = {
        "name": "hello",
        "version": "1.0",
        "build": "0",
        "build_number": 0,
        "depends": [],
        "subdir": "noarch",
        "noarch": "generic",
        "license": "MIT",
        "timestamp": 1,
    }
    write_package(stage, channel / "noarch", index, text_prefixes=[PLACEHOLDER])
    (channel / "linux-64").mkdir()
    elsewhere = RattlerEngine([str(channel)], tmp_path / "pkgs-elsewhere")
    await elsewhere.index(channel)
    source = tmp_path / "managed" / "hello"
    await elsewhere.create(source, ["hello"])
    assert (source / "share" / "hello" / "where.txt").read_text() == f"installed in {source}\n"

    shutil.rmtree(channel)
    told = Recorder()
    copied = await RattlerEngine([], tmp_path / "pkgs-empty").clone(source, tmp_path / "b", report=told)
    logs = told.lines
    assert copied.copied_from_source == ["hello-1.0-0"] and copied.fetched == []
    assert (
        tmp_path / "b" / "share" / "hello" / "where.txt"
    ).read_text() == f"installed in {tmp_path / 'b'}\n"
    assert (tmp_path / "b" / "conda-meta" / "hello-1.0-0.json").exists()
    assert any("copied from the source" in line.lower() for line in logs)


async def test_second_service_sees_clone_of_first_as_managed_via_conda_list(
    cloned, demo, tmp_path, make_service
):
    """Entries of conda's list outside the user's folder are managed (read-only) environments."""
    svc = make_service(demo, tmp_path)
    svc.catalog.conda_lists.append(cloned.service.conda_list_path)
    envs = {e.name: e for e in await svc.list()}
    assert envs["mine"].kind == "managed"
    assert envs["mine"].prefix == str(cloned.prefix.resolve())


@pytest.fixture
def small_disk(tmp_path):
    """A home whose folder of environments is an 8 MiB filesystem of its own (tmpfs; mounting one needs
    root, as CI has), apart from the package cache: clones copy their files there and fill it."""
    folder = tmp_path / "home" / "envs"
    folder.mkdir(parents=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(folder)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {done.stderr.decode().strip()}")
    yield folder
    subprocess.run(["umount", "-l", str(folder)], check=False)


async def test_clone_on_a_full_disk_says_so_and_leaves_nothing(demo, small_disk, make_service, tmp_path):
    from jupyter_gpu_env.errors import DiskFull

    svc = make_service(demo, small_disk.parent)
    with pytest.raises(DiskFull) as err:
        await svc.clone("demo", "toobig")
    assert err.value.status == 507 and err.value.reason == "disk_full"
    assert f"The disk holding {small_disk} is full" in err.value.message
    assert _entries(small_disk) == []
    assert "toobig" not in {e.name for e in await svc.list()}


async def test_a_clone_that_fills_the_disk_says_so_in_words_every_time(
    demo, small_disk, make_service, tmp_path
):
    """Its packages are not in the package cache (a managed environment made elsewhere): fetched from the
    channel, then linked into a disk too small for them. The full disk used to be taken for a failed
    download: the packages were linked again without those, to be copied from the source, and that
    failed in other words ('FileExistsError … .partial-…' where the failed link's files could not be
    removed; on a retry, with some packages cached by then, 'no python version specified')."""
    from jupyter_gpu_env.envs.catalog.prefix import disk_usage
    from jupyter_gpu_env.errors import DiskFull

    svc = make_service(dataclasses.replace(demo, pkgs=tmp_path / "pkgs-empty"), small_disk.parent)
    needed = round(disk_usage(demo.env)[0] / 1e6)
    for _attempt in range(2):  # a retry fails the same way
        with pytest.raises(DiskFull) as err:
            await svc.clone("demo", "toobig")
        assert err.value.status == 507 and err.value.reason == "disk_full"
        free = round(shutil.disk_usage(small_disk).free / 1e6)
        assert err.value.message == (
            f"The disk holding {small_disk} is full, so the clone could not be written; nothing was kept. "
            f"It needs up to about {needed} MB (the size of 'demo'), and {free} MB are free. Delete "
            "environments or images you no longer need (or ask your administrator for more space), then "
            "try again."
        )
        assert _entries(small_disk) == []
    assert "toobig" not in {e.name for e in await svc.list()}


async def test_a_full_disk_while_copying_files_is_said_the_same_without_root(
    service, demo, monkeypatch, env_dir_entries
):
    """Where no small disk can be mounted: the disk fills while the clone copies the source's untracked
    files (written halfway, then ENOSPC, as a full disk does)."""
    import errno

    from jupyter_gpu_env.envs import clonefiles
    from jupyter_gpu_env.errors import DiskFull

    def fills_up(src, dst, *args, **kwargs):
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(b"half of it")
        raise OSError(errno.ENOSPC, "No space left on device", str(dst))

    monkeypatch.setattr(clonefiles, "_copy_file", fills_up)
    for _attempt in range(2):
        with pytest.raises(DiskFull) as err:
            await service.clone("demo", "toobig")
        assert err.value.reason == "disk_full"
        assert err.value.message.startswith(
            f"The disk holding {service.user_env_dir} is full, so the clone could not be written; nothing "
            "was kept. It needs up to about "
        )
        assert "MB (the size of 'demo'), and " in err.value.message
        assert env_dir_entries(service.user_env_dir) == []


async def test_a_new_users_first_clone_links_from_the_managed_source_and_fetches_nothing(
    demo, tmp_path, make_service
):
    """An empty package cache (a new user on a hub): the packages come from the managed environment
    itself, hard-linked where it is on the same filesystem, with what holds the prefix rewritten; the
    clone runs, and nothing is fetched into the user's cache."""
    from jupyter_gpu_env.envs.rattler.engine import RattlerEngine

    svc = make_service(demo, tmp_path / "home")
    svc.engine = RattlerEngine([str(demo.channel)], tmp_path / "empty-pkgs")
    result = await svc.clone("demo", "first")
    prefix = svc.user_env_dir / "first"
    report = result.report
    assert report.fetched == [] and len(report.copied_from_source) == report.packages >= 30
    assert not any((tmp_path / "empty-pkgs").glob("*/info"))  # nothing extracted into the new cache
    os_py = "lib/python3.11/os.py"
    assert (prefix / os_py).stat().st_ino == (demo.env / os_py).stat().st_ino  # linked, not copied
    # what holds the prefix points at the clone: entry points, and text files with a placeholder
    assert (prefix / "bin" / "jupyter-kernel").read_text().splitlines()[0] == f"#!{prefix}/bin/python3.11"
    assert (prefix / "bin" / "jupyter-kernel").stat().st_ino != (
        demo.env / "bin" / "jupyter-kernel"
    ).stat().st_ino
    out = subprocess.run(
        [str(prefix / "bin" / "python"), "-c", "import sys, six, ipykernel; print(sys.prefix)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert out == str(prefix)
    meta = json.loads(next((prefix / "conda-meta").glob("python-3*.json")).read_text())
    assert meta["link"]["source"] == str(demo.env)
    # the managed environment is untouched, and a change to the clone does not reach it
    assert (demo.env / os_py).read_text() == (prefix / os_py).read_text()


async def test_a_clone_from_an_own_environment_copies_what_the_cache_lacks(demo, tmp_path, make_service):
    """The user's own source is theirs to edit: what the cache lacks is copied from it, never linked."""
    from jupyter_gpu_env.envs.rattler.engine import RattlerEngine

    svc = make_service(demo, tmp_path / "home")
    await svc.clone("demo", "mine")
    svc.engine = RattlerEngine([str(demo.channel)], tmp_path / "empty-pkgs")
    await svc.clone("mine", "again")
    os_py = "lib/python3.11/os.py"
    assert (svc.user_env_dir / "again" / os_py).stat().st_ino != (
        svc.user_env_dir / "mine" / os_py
    ).stat().st_ino
    assert (svc.user_env_dir / "again" / os_py).read_text() == (svc.user_env_dir / "mine" / os_py).read_text()


def test_binary_replace_keeps_the_length_in_the_padding():
    from jupyter_gpu_env.envs.clonefiles import binary_replace

    old, new = b"/opt/envs/a", b"/home/user/envs/longer"
    data = b"\x7fELF" + old + b"/lib\0" + b"\0" * 40 + b"tail" + old + b"\0\0"
    out = binary_replace(data, old, b"/x")
    assert out is not None and len(out) == len(data) and out.count(b"/x") == 2
    fitted = binary_replace(data[: -len(old) - 6], old, new)
    assert fitted is not None and fitted.startswith(b"\x7fELF" + new + b"/lib\0")
    assert binary_replace(b"x" + old + b"\0", old, new) is None  # no room: the caller keeps it as it is
