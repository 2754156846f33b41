"""What exists to add: conda packages of the demo's channel by part of the name, PyPI ones by exact name."""

from __future__ import annotations

import pytest
from helpers import make_wheel

from jupyter_gpu_env.envs.changes.search import PackageSearcher
from jupyter_gpu_env.envs.pip.tool import PipSettings
from jupyter_gpu_env.errors import GpuEnvError


async def test_conda_names_holding_the_query_with_versions(service):
    found = await service.search("ipy", "conda")
    names = [p.name for p in found.packages]
    assert names[:2] == ["ipython", "ipykernel"] and found.total == len(
        names
    )  # starting with it, shortest first
    assert all(p.kind == "conda" and p.versions for p in found.packages)
    exact = await service.search("jedi", "conda", limit=1)
    assert [p.name for p in exact.packages] == ["jedi"] and exact.packages[0].versions[0][0].isdigit()
    assert (await service.search("zzz-nothing", "conda")).packages == []


async def test_where_a_package_to_add_comes_from(service):
    # the demo's channel holds jedi but not distributed: a Dask cluster's distributed comes from PyPI
    assert await service.searcher.source("jedi") == "conda"
    assert await service.searcher.source("Jedi>=0.1") == "conda"
    assert await service.searcher.source("distributed") == "pypi"
    assert await service.searcher.source("ipy") == "pypi"  # part of a name is no package


async def test_unreachable_channels_leave_a_package_to_conda():
    class Unreachable:
        async def search(self, query, limit):
            raise GpuEnvError("The channels cannot be reached.", reason="channel_unreachable")

    searcher = PackageSearcher(Unreachable(), PipSettings())  # type: ignore[arg-type]
    assert await searcher.source("distributed") == "conda"


async def test_the_answer_is_kept(service):
    first = await service.search("tabu", "conda")
    assert await service.search("TABU ", "conda") is first


@pytest.fixture
def wheels(tmp_path):
    folder = tmp_path / "wheels"
    folder.mkdir()
    for version in ("1.0", "2.0", "10.0"):
        make_wheel(folder, "gpuenvmini", version, value=version)
    return folder


async def test_a_pypi_name_is_looked_up_in_the_wheel_folders(demo, tmp_path, make_service, wheels):
    svc = make_service(demo, tmp_path, pip=PipSettings(find_links=(str(wheels),), no_index=True))
    found = await svc.search("GpuEnvMini", "pypi")
    assert [(p.name, p.kind, p.versions) for p in found.packages] == [
        ("gpuenvmini", "pypi", ["10.0", "2.0", "1.0"])
    ]
    assert (await svc.search("gpuenvmissing", "pypi")).packages == []


@pytest.fixture
def index():
    """A PEP 691 simple index on 127.0.0.1 with one project (JSON) and a 404 for the others."""
    import http.server
    import json
    import threading

    class Simple(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path != "/simple/gpuenvmini/":
                self.send_error(404)
                return
            files = [{"filename": f"gpuenvmini-{v}-py3-none-any.whl"} for v in ("0.9", "1.1rc1")]
            files.append({"filename": "gpuenvmini-1.0.tar.gz"})
            data = json.dumps({"meta": {"api-version": "1.0"}, "name": "gpuenvmini", "files": files}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Simple)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    server.shutdown()
    server.server_close()


async def test_a_pypi_name_is_looked_up_on_the_index(demo, tmp_path, make_service, index):
    svc = make_service(demo, tmp_path, pip=PipSettings(index_url=index))
    found = await svc.search("gpuenvmini", "pypi")
    assert found.packages[0].versions == ["1.1rc1", "1.0", "0.9"]
    assert (await svc.search("other", "pypi")).packages == []


async def test_an_unreachable_index_is_503(demo, tmp_path, make_service):
    from jupyter_gpu_env.errors import Unavailable

    svc = make_service(demo, tmp_path, pip=PipSettings(index_url="http://127.0.0.1:9/simple"))
    with pytest.raises(Unavailable, match="could not be reached") as e:
        await svc.search("anything", "pypi")
    assert e.value.status == 503 and e.value.reason == "index_unavailable"
