"""PyPI packages in a clone: installed with uv (or the environment's pip) inside the transaction, their
scripts pointing at the environment's own path, listed, exported, removed; and plans that change nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers import Recorder

from jupyter_gpu_env.envs.pip.tool import PipSettings
from jupyter_gpu_env.errors import Conflict, NotFound


def _py(prefix: Path, code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(prefix / "bin" / "python"), "-c", code], capture_output=True, text=True)


@pytest.mark.parametrize("installer", ["uv", "pip"])
async def test_a_pypi_package_is_installed_in_the_transaction_and_runs(
    demo, tmp_path, make_service, wheelhouse, installer
):
    settings = PipSettings(installer=installer, find_links=(str(wheelhouse),), no_index=True)
    svc = make_service(demo, tmp_path, pip=settings)
    await svc.clone("demo", "pipenv")
    prefix = svc.user_env_dir / "pipenv"
    told = Recorder()
    res = await svc.change_packages("pipenv", [], [], pip_add=["gpuenvmini==1.0"], report=told)
    assert res.report.installed == ["gpuenvmini==1.0"] and res.report.removed == []
    assert _py(prefix, "import gpuenvmini; print(gpuenvmini.VALUE)").stdout.strip() == "one"
    # Its script was written in the transaction's copy; it names the environment's own Python.
    script = prefix / "bin" / "gpuenvmini-hello"
    assert script.read_text().splitlines()[0] == f"#!{prefix}/bin/python"
    assert subprocess.run([str(script)], capture_output=True, text=True).stdout.strip() == "hello from one"
    detail = await svc.get("pipenv")
    assert {(p.name, p.version, p.kind) for p in detail.packages} >= {("gpuenvmini", "1.0", "pypi")}
    exported = await svc.export("pipenv", "yaml")
    assert "gpuenvmini==1.0" in exported.content.split("pip:", 1)[1]

    res = await svc.change_packages("pipenv", [], [], pip_add=["gpuenvmini>1"])
    assert res.report.installed == ["gpuenvmini==2.0"] and res.report.removed == ["gpuenvmini==1.0"]
    res = await svc.change_packages("pipenv", [], [], pip_remove=["gpuenvmini"])
    assert res.report.removed == ["gpuenvmini==2.0"]
    assert _py(prefix, "import gpuenvmini").returncode != 0 and not script.exists()
    # The managed source never changed.
    assert _py(demo.env, "import gpuenvmini").returncode != 0


async def test_conda_and_pypi_changes_are_one_transaction(demo, tmp_path, make_service, wheelhouse):
    settings = PipSettings(find_links=(str(wheelhouse),), no_index=True)
    svc = make_service(demo, tmp_path, pip=settings)
    await svc.clone("demo", "both")
    prefix = svc.user_env_dir / "both"
    with pytest.raises(NotFound) as e:
        await svc.change_packages("both", ["tabulate"], [], pip_add=["gpuenvmissing"])
    # In the field's words: the name, where it was looked for; no installer text, no path.
    assert e.value.reason == "pypi_package_not_found"
    assert str(e.value).startswith(
        "No package named like 'gpuenvmissing' in the package locations this server installs from"
    )
    assert str(tmp_path) not in str(e.value) and "\n" not in str(e.value)
    # The conda half had been applied to the copy only: the environment is as it was.
    assert _py(prefix, "import tabulate").returncode != 0
    res = await svc.change_packages("both", ["tabulate"], [], pip_add=["gpuenvmini"])
    assert {p.split("-")[0] for p in res.report.installed} >= {"tabulate", "gpuenvmini==2.0"}
    assert _py(prefix, "import tabulate, gpuenvmini").returncode == 0


async def test_pypi_removals_are_checked(demo, tmp_path, make_service, wheelhouse):
    svc = make_service(demo, tmp_path, pip=PipSettings(find_links=(str(wheelhouse),), no_index=True))
    await svc.clone("demo", "guard")
    with pytest.raises(Conflict, match="ipykernel is a conda package") as e:
        await svc.change_packages("guard", [], [], pip_remove=["ipykernel"])
    assert e.value.reason == "conda_package"
    with pytest.raises(NotFound, match="Not installed.*nothere"):
        await svc.change_packages("guard", [], [], pip_remove=["nothere"])
    res = await svc.change_packages("guard", [], [], pip_remove=["six"])  # installed with pip in the demo
    assert [r.split("==")[0] for r in res.report.removed] == ["six"]


async def test_a_dry_run_shows_the_cascade_and_changes_nothing(service):
    await service.clone("demo", "planned")
    prefix = service.user_env_dir / "planned"
    before = sorted(p.name for p in (prefix / "conda-meta").iterdir())
    plan = await service.plan_packages("planned", [], ["jedi"])
    removed = {c.name for c in plan.changes if c.action == "remove"}
    assert {"jedi", "ipython", "ipykernel"} <= removed
    assert [c.requested for c in plan.changes if c.name == "jedi"] == [True]
    assert "ipykernel" in plan.unrequested_removals and "jedi" not in plan.unrequested_removals
    assert plan.runs_notebooks is False
    assert any("will no longer run notebooks" in w for w in plan.warnings)
    assert sorted(p.name for p in (prefix / "conda-meta").iterdir()) == before
    assert _py(prefix, "import ipykernel").returncode == 0

    added = await service.plan_packages("planned", ["tabulate"], [])
    (change,) = added.changes
    assert (change.name, change.kind, change.action, change.version_before) == (
        "tabulate",
        "conda",
        "install",
        None,
    )
    assert change.requested and added.runs_notebooks and added.unrequested_removals == []
    assert change.download_bytes == 0  # the demo's package cache has it: nothing to download


@pytest.mark.parametrize("installer", ["uv", "pip"])
async def test_a_pypi_dry_run_lists_versions(demo, tmp_path, make_service, wheelhouse, installer):
    settings = PipSettings(installer=installer, find_links=(str(wheelhouse),), no_index=True)
    svc = make_service(demo, tmp_path, pip=settings)
    await svc.clone("demo", "pipplan")
    plan = await svc.plan_packages("pipplan", [], [], pip_add=["gpuenvmini==1.0"], pip_remove=["six"])
    assert len(plan.changes) == 2
    mini = next(c for c in plan.changes if c.name == "gpuenvmini")
    assert (mini.kind, mini.action, mini.version_before, mini.version_after) == (
        "pypi",
        "install",
        None,
        "1.0",
    )
    six = next(c for c in plan.changes if c.name == "six")
    assert (six.kind, six.action, six.version_after) == ("pypi", "remove", None) and six.version_before
    assert plan.runs_notebooks and plan.unrequested_removals == []
    if installer == "pip":  # pip's report says where the wheel is: its size is known
        assert mini.download_bytes == (wheelhouse / "gpuenvmini-1.0-py3-none-any.whl").stat().st_size
    assert _py(svc.user_env_dir / "pipplan", "import six").returncode == 0
