import subprocess

import pytest
from helpers import Recorder

from jupyter_gpu_env.errors import Conflict, NotFound, Unavailable


def _run(prefix, code):
    return subprocess.run([str(prefix / "bin" / "python"), "-c", code], capture_output=True, text=True)


async def test_add_then_remove_a_package(service):
    await service.clone("demo", "custom")
    prefix = service.user_env_dir / "custom"
    told = Recorder()
    res = await service.change_packages("custom", ["tabulate"], [], report=told)
    seen = told.seen
    assert [p.split("-")[0] for p in res.report.installed] == ["tabulate"] and res.report.removed == []
    assert any(m.startswith("Solving") for _, m in seen) and seen[-1][0] <= 1.0
    assert _run(prefix, "import tabulate; print(tabulate.__file__)").stdout.startswith(str(prefix))
    detail = await service.get("custom")
    assert "tabulate" in {p.name for p in detail.packages}
    assert res.environment.package_count == detail.package_count
    # the source is untouched
    assert _run(service.catalog.managed_dirs[0] / "demo", "import tabulate").returncode != 0

    res = await service.change_packages("custom", [], ["tabulate"])
    assert [p.split("-")[0] for p in res.report.removed] == ["tabulate"]
    assert _run(prefix, "import tabulate").returncode != 0
    assert _run(prefix, "import ipykernel, six").returncode == 0  # the rest stays, pip packages too


async def test_remove_takes_dependents_along(service):
    await service.clone("demo", "slim")
    res = await service.change_packages("slim", [], ["jedi"])
    removed = {p.rsplit("-", 2)[0] for p in res.report.removed}
    assert {"jedi", "ipython", "ipykernel"} <= removed
    assert "traitlets" not in removed and "python" not in removed
    detail = await service.get("slim")
    assert not detail.has_ipykernel


async def test_unknown_package_and_unsolvable_requests(service):
    await service.clone("demo", "strict")
    with pytest.raises(NotFound, match=r"'no-such-package' not found in channels file://") as e:
        await service.change_packages("strict", ["no-such-package"], [])
    assert e.value.status == 404 and e.value.reason == "package_not_found"
    with pytest.raises(Conflict, match="python 3.9") as e:
        await service.change_packages("strict", ["python 3.9.*"], [])
    assert e.value.reason == "unsolvable"
    with pytest.raises(NotFound, match="Not installed"):
        await service.change_packages("strict", [], ["tabulate"])
    with pytest.raises(Conflict, match="python"):
        await service.change_packages("strict", [], ["python"])
    with pytest.raises(Conflict, match="six was installed with pip.*`pip_remove`") as e:
        await service.change_packages("strict", [], ["six"])
    assert e.value.reason == "pip_package"
    with pytest.raises(NotFound):
        await service.change_packages("nope", ["tabulate"], [])
    assert _run(service.user_env_dir / "strict", "import ipykernel").returncode == 0


async def test_unreachable_channel_is_503(demo, tmp_path, make_service):
    svc = make_service(demo, tmp_path, channels=["http://127.0.0.1:9/nowhere"])
    await svc.clone("demo", "offline")  # cloning needs no channel: the package cache has everything
    with pytest.raises(Unavailable) as e:
        await svc.change_packages("offline", ["tabulate"], [])
    assert e.value.status == 503 and "127.0.0.1:9" in e.value.message
