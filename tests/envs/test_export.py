import hashlib
import re
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from jupyter_gpu_env.errors import InvalidRequest, NotFound
from jupyter_gpu_env.models.envs import ExportFormat


def _sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def test_export_yaml(cloned, demo):
    res = await cloned.service.export("mine", "yaml")
    assert res.format is ExportFormat.yaml and res.filename == "mine-environment.yml"
    text = res.content
    assert text.startswith("name: mine\nchannels:\n  - file://")
    assert f"  - {demo.channel.resolve().as_uri()}\n" in text
    assert re.search(r"^  - python=3\.\d+\.\d+=h_local_0$", text, re.M)
    assert re.search(r"^  - ipykernel=[\d.]+=pyh_local_0$", text, re.M)
    pip_section = text.split("  - pip:\n", 1)[1]
    assert re.fullmatch(r"      - six==[\d.]+\n", pip_section)


async def test_export_explicit_lock(cloned):
    res = await cloned.service.export("mine", ExportFormat.explicit)
    lines = res.content.splitlines()
    assert res.filename == "mine-explicit.txt"
    assert "@EXPLICIT" in lines and "# platform: linux-64" in lines
    urls = lines[lines.index("@EXPLICIT") + 1 :]
    packages = [u for u in urls if not u.startswith("#")]
    assert len(packages) == len([p for p in (await cloned.service.get("mine")).packages if p.kind == "conda"])
    names = [Path(urlparse(u).path).name.rsplit("-", 2)[0] for u in packages]
    assert names.index("python") < names.index("ipykernel")  # dependencies first
    assert names.index("ipython") < names.index("ipykernel")
    for line in packages:
        url, digest = line.split("#sha256:")
        assert _sha256(Path(unquote(urlparse(url).path))) == digest
    assert any(re.fullmatch(r"#\s+six==[\d.]+", u) for u in urls)  # pip packages are named, as comments


async def test_export_unknown_env(service):
    with pytest.raises(NotFound):
        await service.export("nope", "yaml")
    with pytest.raises(InvalidRequest, match="yaml, explicit"):
        await service.export("demo", "toml")
