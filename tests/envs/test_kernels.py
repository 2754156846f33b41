import json
import textwrap

import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager

from jupyter_gpu_env import kernelspecs
from jupyter_gpu_env.errors import Conflict, Forbidden, NotFound


def test_activation_env_parsing(tmp_path):
    prefix = tmp_path / "env"
    scripts = prefix / "etc" / "conda" / "activate.d"
    scripts.mkdir(parents=True)
    (scripts / "10-a.sh").write_text(
        textwrap.dedent(
            """\
            export A="$CONDA_PREFIX/share/a"
            export B=${CONDA_PREFIX}/b:$PATH
            export C='literal $HOME'
            export D=plain
            export E="$A/more"
            export F="$(uname)"
            export G=${X:-default}
            if [ -n "$Y" ]; then
              export H=1
            fi
            case $x in a) export I=1 ;; esac
            foo() {
              export J=1
            }
            export K="two words"
            unset L
            M=1
            export N=1 O=2
            """
        )
    )
    (scripts / "20-b.csh").write_text("setenv CSH 1\n")
    env, skipped = kernelspecs.activation_env(prefix, "e")
    assert env["PATH"] == f"{prefix}/bin:${{PATH}}"
    assert env["CONDA_PREFIX"] == str(prefix) and env["CONDA_DEFAULT_ENV"] == "e"
    assert env["A"] == f"{prefix}/share/a"
    assert env["B"] == f"{prefix}/b:{prefix}/bin:${{PATH}}"
    assert env["C"] == "literal $$HOME"  # jupyter_client's Template turns $$ back into $
    assert env["D"] == "plain" and env["E"] == f"{prefix}/share/a/more" and env["K"] == "two words"
    for absent in ("F", "G", "H", "I", "J", "L", "M", "N", "CSH"):
        assert absent not in env
    assert len(skipped) >= 8


def test_kernel_name_is_lowercase_and_stable(tmp_path):
    assert kernelspecs.kernel_name_for("torch", tmp_path) == "gpu-env-torch"
    a = kernelspecs.kernel_name_for("Torch", tmp_path / "a")
    assert (
        a.startswith("gpu-env-torch-")
        and a == a.lower()
        and a != kernelspecs.kernel_name_for("Torch", tmp_path / "b")
    )


async def test_register_without_ipykernel_is_409(tmp_path):
    prefix = tmp_path / "bare"
    (prefix / "conda-meta").mkdir(parents=True)
    with pytest.raises(Conflict, match="add the package ipykernel|Add the package ipykernel") as e:
        kernelspecs.register("bare", prefix, data_dir=tmp_path / "data")
    assert e.value.status == 409 and e.value.reason == "no_ipykernel"
    assert not (tmp_path / "data" / "kernels").exists()


def test_foreign_kernelspecs_are_left_alone(cloned, tmp_path):
    foreign = tmp_path / "kernels" / "gpu-env-mine"
    foreign.mkdir(parents=True)
    (foreign / "kernel.json").write_text(
        json.dumps({"argv": ["x"], "display_name": "x", "language": "python"})
    )
    with pytest.raises(Conflict, match="not created by jupyter-gpu-env"):
        kernelspecs.register("mine", cloned.prefix, data_dir=tmp_path)
    with pytest.raises(Forbidden):
        kernelspecs.unregister("gpu-env-mine", data_dir=tmp_path)
    with pytest.raises(NotFound):
        kernelspecs.unregister("gpu-env-none", data_dir=tmp_path)
    assert (foreign / "kernel.json").exists()


async def test_register_start_and_unregister_kernel(cloned, tmp_path, monkeypatch):
    data = tmp_path / "jupyter-data"
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(data))
    svc = cloned.service
    monkeypatch.setattr(svc, "kernel_data_dir", None)  # the user's data dir, as in production
    monkeypatch.setattr(svc.catalog, "kernel_data_dir", None)

    info = await svc.register_kernel("mine", display_name="Mine (GPU)")
    assert info.kernel_name == "gpu-env-mine" and info.resource_dir == str(data / "kernels" / "gpu-env-mine")
    spec = json.loads((data / "kernels" / "gpu-env-mine" / "kernel.json").read_text())
    assert spec["argv"] == [
        f"{cloned.prefix}/bin/python",
        "-m",
        "ipykernel_launcher",
        "-f",
        "{connection_file}",
    ]
    assert spec["display_name"] == "Mine (GPU)" and spec["metadata"]["jupyter_gpu_env"]["prefix"] == str(
        cloned.prefix
    )
    # the activate.d script came along with the clone, its $CONDA_PREFIX now the clone's
    assert spec["env"]["DEMO_HOME"] == f"{cloned.prefix}/share/demo"
    assert "DEMO_CONDITIONAL" not in spec["env"] and "DEMO_SUBST" not in spec["env"]
    assert (await svc.get("mine")).kernel_name == "gpu-env-mine"
    assert kernelspecs.find_for_prefix(cloned.prefix).kernel_name == "gpu-env-mine"
    again = await svc.register_kernel("mine")  # idempotent, back to the default display name
    assert again.display_name == "Python (mine)"

    # Jupyter finds it by name, as the Launcher, papermill and nbconvert do
    ksm = KernelSpecManager()
    assert ksm.get_kernel_spec("gpu-env-mine").display_name == "Python (mine)"
    km = AsyncKernelManager(kernel_name="gpu-env-mine", kernel_spec_manager=ksm)
    await km.start_kernel()
    try:
        kc = km.client()
        kc.start_channels()
        await kc.wait_for_ready(timeout=60)
        outputs = []
        code = "import os, sys, six; print(sys.prefix); print(os.environ['DEMO_HOME']); print(os.environ['PATH'].split(':')[0])"
        reply = await kc.execute_interactive(
            code, timeout=60, output_hook=lambda m: outputs.append(m["content"].get("text", ""))
        )
        kc.stop_channels()
    finally:
        await km.shutdown_kernel(now=True)
    assert reply["content"]["status"] == "ok"
    assert "".join(outputs).split() == [
        str(cloned.prefix),
        f"{cloned.prefix}/share/demo",
        f"{cloned.prefix}/bin",
    ]

    assert await svc.unregister_kernel("mine") == "gpu-env-mine"
    assert not (data / "kernels" / "gpu-env-mine").exists()
    with pytest.raises(NotFound):
        await svc.unregister_kernel("mine")


async def test_register_kernel_for_managed_env_without_ipykernel_says_to_clone(service, tmp_path):
    bare = tmp_path / "site" / "bare-managed"
    (bare / "conda-meta").mkdir(parents=True)
    service.catalog.managed_dirs.append(bare)
    with pytest.raises(Conflict, match="Clone it"):
        await service.register_kernel("bare-managed")
