import asyncio
import json
import os
import shutil
import sys

import pytest

from jupyter_gpu_env.envs.catalog import EnvironmentCatalog
from jupyter_gpu_env.errors import NotFound


async def test_managed_environment_details(demo, service):
    envs = await service.list()
    assert [e.name for e in envs] == ["demo"]
    d = await service.get("demo")
    assert d.kind == "managed" and d.prefix == str(demo.env)
    assert d.python_version == "{}.{}.{}".format(*sys.version_info[:3])
    assert d.has_ipykernel and d.kernel_name is None and d.source is None
    by_name = {p.name: p for p in d.packages}
    assert by_name["ipykernel"].kind == "conda" and by_name["ipykernel"].channel.startswith("file://")
    assert by_name["python"].build == "h_local_0"
    assert by_name["six"].kind == "pypi" and by_name["six"].build == "" and by_name["six"].channel is None
    assert "tabulate" not in by_name  # in the channel, not in the environment
    assert d.package_count == len(d.packages)
    assert d.size_bytes > 50_000_000 and 0 < d.shared_bytes <= d.size_bytes


async def test_own_environments_and_hidden_temporaries(cloned):
    svc = cloned.service
    (svc.user_env_dir / ".mine.partial-1234abcd" / "conda-meta").mkdir(parents=True)
    (svc.user_env_dir / "not-an-env").mkdir(exist_ok=True)
    try:
        names = [e.name for e in await svc.list()]
        assert names == ["mine", "demo"]  # own first, then managed
    finally:
        shutil.rmtree(svc.user_env_dir / ".mine.partial-1234abcd")


async def test_name_clash_and_conda_lists(tmp_path):
    def env(path, python="3.11.0"):
        (path / "conda-meta").mkdir(parents=True)
        rec = {
            "name": "python",
            "version": python,
            "build": "0",
            "files": [],
            "channel": "https://conda.anaconda.org/conda-forge/",
        }
        (path / "conda-meta" / f"python-{python}-0.json").write_text(json.dumps(rec))
        return path

    own = env(tmp_path / "home" / "envs" / "torch")
    env(tmp_path / "site" / "torch")  # managed, same folder name as an own env
    env(tmp_path / "site" / "base")
    env(tmp_path / "other" / "base")  # managed twice under one name
    root = env(tmp_path / "opt" / "conda")  # a conda installation: itself and its envs/
    env(root / "envs" / "tools")
    listed = env(tmp_path / "elsewhere" / "viaList")
    lst = tmp_path / "environments.txt"
    lst.write_text(f"{listed}\n{own}\n/does/not/exist\n\n{listed}\n")
    cat = EnvironmentCatalog(
        [tmp_path / "site", tmp_path / "other", root],
        tmp_path / "home" / "envs",
        conda_lists=[lst],
        kernel_data_dir=tmp_path / "k",
    )
    envs = {e.name: e for e in await cat.list()}
    assert set(envs) == {"torch", "torch@site", "base", "base@other", "conda", "tools", "viaList"}
    assert envs["torch"].kind == "own" and envs["torch"].prefix == str(own)
    assert envs["torch@site"].kind == "managed"
    assert envs["base@other"].prefix == str(tmp_path / "other" / "base")
    assert envs["viaList"].kind == "managed"
    assert envs["conda"].python_version == "3.11.0" and not envs["conda"].has_ipykernel
    detail = await cat.get("torch@site")
    assert detail.packages[0].channel == "conda-forge"
    with pytest.raises(NotFound, match="Known environments: base, base@other, conda"):
        await cat.get("missing")


async def test_descriptions_are_cached_until_the_env_changes(tmp_path, monkeypatch):
    import jupyter_gpu_env.envs.catalog.discovery as discovery

    prefix = tmp_path / "envs" / "e"
    (prefix / "conda-meta").mkdir(parents=True)
    cat = EnvironmentCatalog([], tmp_path / "envs", conda_lists=[], kernel_data_dir=tmp_path / "k")
    calls = []
    real = discovery.summarize

    def counting(p):
        calls.append(p)
        return real(p)

    monkeypatch.setattr(discovery, "summarize", counting)
    first = await cat.list()
    assert await asyncio.to_thread(cat.wait_measured, 30)
    again = await cat.list()
    assert len(calls) == 1 and [e.name for e in first] == [e.name for e in again] == ["e"]
    assert again[0].size_state == "measured"
    rec = {"name": "zlib", "version": "1.3", "build": "0", "files": []}
    (prefix / "conda-meta" / "zlib-1.3-0.json").write_text(json.dumps(rec))
    os.utime(prefix / "conda-meta", ns=(1, 1))  # a new mtime, whatever the clock's resolution
    changed = await cat.list()
    assert len(calls) == 2 and changed[0].package_count == 1 and changed[0].size_state == "measuring"
    assert await asyncio.to_thread(cat.wait_measured, 30)
    cat.refresh()
    await cat.list()
    assert len(calls) == 3


async def test_concurrent_listings_share_one_scan(demo, service):
    import asyncio

    results = await asyncio.gather(*(service.list() for _ in range(10)))
    assert all(r == results[0] for r in results)


def test_conda_list_add_and_remove_keep_other_lines(tmp_path):
    from jupyter_gpu_env.envs import conda_list

    lst = tmp_path / ".conda" / "environments.txt"
    a, b = tmp_path / "a", tmp_path / "b"
    conda_list.add(lst, a)  # creates the file and its folder
    conda_list.add(lst, a)  # no duplicate
    lst.write_text(lst.read_text() + "/opt/conda\n\n/opt/conda/envs/x\n")
    conda_list.add(lst, b)
    assert lst.read_text().splitlines() == [str(a), "/opt/conda", "/opt/conda/envs/x", str(b)]
    conda_list.remove(lst, a)
    assert lst.read_text().splitlines() == ["/opt/conda", "/opt/conda/envs/x", str(b)]
    assert [p.name for p in tmp_path.joinpath(".conda").iterdir()] == ["environments.txt"]  # no temporaries


def _catalog(demo, tmp_path, state_file=None):
    return EnvironmentCatalog(
        [demo.managed_dir],
        tmp_path / "envs",
        conda_lists=[],
        kernel_data_dir=tmp_path / "jupyter",
        state_file=state_file,
    )


async def test_the_first_list_answers_before_sizes_are_measured(demo, tmp_path):
    catalog = _catalog(demo, tmp_path)
    (first,) = await catalog.list()
    assert first.size_state == "measuring" and first.size_bytes is None and first.shared_bytes is None
    assert first.python_version == "{}.{}.{}".format(*sys.version_info[:3])
    detail = await catalog.get("demo")
    assert first.package_count == detail.package_count  # from listings alone, the same count
    assert await asyncio.to_thread(catalog.wait_measured, 60)
    (later,) = await catalog.list()
    assert later.size_state == "measured" and later.size_bytes == detail.size_bytes > 50_000_000


async def test_a_restart_reuses_the_saved_catalog_until_the_environment_changes(demo, tmp_path):
    state = tmp_path / "state" / "environments.json"
    before = _catalog(demo, tmp_path, state)
    await before.list()
    assert await asyncio.to_thread(before.wait_measured, 60)
    assert json.loads(state.read_text())["prefixes"][str(demo.env)]["size"][0] > 50_000_000

    (listed,) = await _catalog(demo, tmp_path, state).list()  # a new server, same state folder
    assert listed.size_state == "measured" and listed.size_bytes > 50_000_000

    saved = json.loads(state.read_text())
    saved["prefixes"][str(demo.env)]["key"][0] -= 1  # conda-meta changed while the server was down
    state.write_text(json.dumps(saved))
    (stale,) = await _catalog(demo, tmp_path, state).list()
    assert stale.size_state == "measuring"


async def test_an_unreadable_saved_catalog_is_a_cold_start(demo, tmp_path):
    state = tmp_path / "environments.json"
    state.write_text("{not json")
    (listed,) = await _catalog(demo, tmp_path, state).list()
    assert listed.name == "demo" and listed.size_state == "measuring"
