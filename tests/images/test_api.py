"""Packing environments into squashfs images through the REST API: real conda-pack, mksquashfs, squashfuse."""

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import body, error, run_code, start_session, wait_task, wait_until

from jupyter_gpu_env.images.service import ImageService

needs_squashfs = pytest.mark.skipif(shutil.which("mksquashfs") is None, reason="squashfs-tools not installed")
pytestmark = needs_squashfs


@pytest.fixture
def image_dir(tmp_path):
    return tmp_path / "images"


@pytest.fixture
def max_bytes():
    return 0


@pytest.fixture
def jp_server_config(jp_server_config, demo_app_config, tmp_path, image_dir, max_bytes):
    return {
        **jp_server_config,
        "GpuEnvApp": {
            **demo_app_config,
            "image_dir": str(image_dir),
            "image_mount_prefix": str(tmp_path / "mnt"),
            "image_max_bytes": max_bytes,
        },
    }


async def pack(api, env="demo", **req):
    resp = await api("environments", env, "image", method="POST", body=json.dumps(req))
    if resp.code == 200:
        return resp.code, await body(resp)
    assert resp.code == 202
    task = await wait_task(api, (await body(resp))["id"], timeout=300)
    return resp.code, task


async def test_pack_extract_run_and_cache(api, image_dir, tmp_path, jp_fetch):
    code, task = await pack(api)
    assert code == 202 and task["state"] == "succeeded", task
    image = task["result"]
    path = Path(image["path"])
    assert path.parent == image_dir and path.is_file() and path.stat().st_size == image["size_bytes"]
    assert image["file_count"] > 1000  # thousands of files, now one
    assert image["usage"]["mount_path"] == str(tmp_path / "mnt" / "demo")
    assert f"--bind {path}:{tmp_path / 'mnt' / 'demo'}:image-src=/" in image["usage"]["apptainer"]
    assert "conda-pack" in image["tools"]
    assert not [p for p in image_dir.iterdir() if p.name.startswith(".")]  # no temporaries left

    # Extracted where it was packed to live, it runs with no unpack step.
    dest = Path(image["usage"]["mount_path"])
    dest.parent.mkdir(parents=True)
    subprocess.run(["unsquashfs", "-q", "-n", "-d", str(dest), str(path)], check=True)
    out = subprocess.run(
        [str(dest / "bin" / "python"), "-c", "import sys, six, ipykernel; print(sys.prefix)"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert out.stdout.strip() == str(dest)

    # Same content: the existing image comes back at once.
    code, again = await pack(api)
    assert code == 200 and again["id"] == image["id"]

    listed = (await body(await api("images")))["images"]
    assert [i["id"] for i in listed] == [image["id"]]
    resp = await api("images", image["id"], "download")
    assert resp.body == path.read_bytes()
    await api("images", image["id"], method="DELETE")
    assert not path.exists()
    await error(api("images", image["id"]), 404)


def test_the_squashfuse_lines_mount_where_any_user_may_and_say_how_to_unmount():
    from jupyter_gpu_env.images.service import usage_lines

    u = usage_lines("/data/my images/abc.sqfs", "/opt/gpu-env/demo", "abc123")
    # not the pack's prefix under /opt, which a user may not make: the machine's temporary folder
    assert u.squashfuse_mount == '"${TMPDIR:-/tmp}/gpu-env-abc123"'
    assert u.squashfuse == (
        'mkdir -p "${TMPDIR:-/tmp}/gpu-env-abc123" && '
        "squashfuse '/data/my images/abc.sqfs' \"${TMPDIR:-/tmp}/gpu-env-abc123\" && "
        '"${TMPDIR:-/tmp}/gpu-env-abc123/bin/python"'
    )
    assert u.unmount.startswith(
        'fusermount3 -u "${TMPDIR:-/tmp}/gpu-env-abc123" 2>/dev/null || fusermount -u '
    )


@pytest.mark.skipif(
    not os.path.exists("/dev/fuse") or shutil.which("squashfuse") is None,
    reason="squashfuse or /dev/fuse missing: cannot mount here",
)
async def test_the_squashfuse_usage_lines_mount_run_and_unmount_the_image(api, tmp_path):
    """The lines as a user copies them into a shell: mount in a folder they make, run Python, unmount.
    Run as this test's user (root in a container has no fusermount; a user's shell uses it)."""
    _, task = await pack(api)
    usage = task["result"]["usage"]
    env = {**os.environ, "TMPDIR": str(tmp_path / "node-tmp")}
    (tmp_path / "node-tmp").mkdir()
    mount = tmp_path / "node-tmp" / f"gpu-env-{task['result']['id']}"
    line = usage["squashfuse"] + ' -c "import sys, ipykernel; print(sys.prefix)"'
    done = subprocess.run(["bash", "-c", line], capture_output=True, text=True, env=env)
    if done.returncode != 0 and not os.path.ismount(mount):
        pytest.skip(f"squashfuse cannot mount in this sandbox: {done.stderr.strip()}")
    try:
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == str(mount) and os.path.ismount(mount)
        with pytest.raises(OSError):
            (mount / "new-file").write_text("read-only")
        again = subprocess.run(["bash", "-c", usage["unmount"]], capture_output=True, text=True, env=env)
        assert again.returncode == 0, again.stderr
        assert not os.path.ismount(mount) and mount.is_dir()
    finally:
        if os.path.ismount(mount):
            subprocess.run(["umount", str(mount)], check=False)


async def test_sif_without_apptainer_is_409(api):
    if shutil.which("apptainer") or shutil.which("singularity"):
        pytest.skip("apptainer is installed here")
    err = await error(
        api("environments", "demo", "image", method="POST", body=json.dumps({"format": "sif"})), 409
    )
    assert "apptainer" in err["message"] and "squashfs" in err["message"]


@pytest.mark.parametrize("max_bytes", [64 * 1024])
async def test_size_limit_fails_clearly_and_leaves_nothing(api, image_dir, max_bytes):
    _, task = await pack(api)
    assert task["state"] == "failed"
    assert task["reason"] == "too_large", task
    assert "limit" in task["message"]
    leftovers = list(image_dir.iterdir()) if image_dir.exists() else []
    assert leftovers == []
    assert (await body(await api("images")))["images"] == []


async def test_killed_pack_leaves_nothing_and_next_pack_works(api, image_dir, jp_serverapp, tmp_path):
    resp = await api("environments", "demo", "image", method="POST", body=json.dumps({"compression": "xz"}))
    task_id = (await body(resp))["id"]

    async def packing():
        return (await body(await api("tasks", task_id)))["progress"] >= 0.05

    await wait_until(packing, within=60, what="conda-pack really running")
    cancelled = await body(await api("tasks", task_id, method="DELETE"))
    assert cancelled["state"] == "cancelled"
    assert (await body(await api("images")))["images"] == []
    assert not list(image_dir.iterdir())
    code, task = await pack(api, compression="xz")
    assert task["state"] == "succeeded", task


def test_stale_temporaries_are_removed_at_start(tmp_path):
    images = tmp_path / "images"
    images.mkdir()
    (images / ".demo-abc-zstd.1234.partial").write_bytes(b"half an image")
    (images / ".demo-abc-zstd.1234.staging").mkdir()
    (images / "orphan.json").write_text(json.dumps({"path": str(images / "gone.sqfs")}))
    (images / "keep.txt").write_text("not ours")
    removed = ImageService(images).cleanup_stale()
    assert removed == 3
    assert [p.name for p in images.iterdir()] == ["keep.txt"]


@pytest.mark.skipif(
    not os.path.exists("/dev/fuse") or shutil.which("squashfuse") is None,
    reason="squashfuse or /dev/fuse missing: image kernels cannot mount here",
)
async def test_kernel_from_an_image_runs_from_the_mount(api, jp_fetch, jp_serverapp):
    _, task = await pack(api)
    image = task["result"]
    resp = await api("images", image["id"], "kernel", method="POST", body=b"{}")
    assert resp.code == 201
    kernel = await body(resp)
    try:
        out = await run_code(jp_fetch, jp_serverapp, kernel["kernel_name"], "import sys; print(sys.prefix)")
        assert out.strip() == kernel["prefix"]
        assert Path(kernel["prefix"]).is_mount()
    finally:
        removed = await body(await api("images", image["id"], "kernel", method="DELETE"))
        assert removed["kernel_name"] == kernel["kernel_name"]
        subprocess.run(["umount", kernel["prefix"]], check=False, capture_output=True)


async def test_twenty_concurrent_packs_of_one_environment_share_one_task(api, image_dir):
    answers = await asyncio.gather(
        *(
            api("environments", "demo", "image", method="POST", body=json.dumps({"compression": "xz"}))
            for _ in range(20)
        )
    )
    assert {r.code for r in answers} == {202}
    ids = {(await body(r))["id"] for r in answers}
    assert len(ids) == 1, ids
    task = await wait_task(api, ids.pop(), timeout=300)
    assert task["state"] == "succeeded", task
    # Once packed, the same request answers the image at once.
    again = await api("environments", "demo", "image", method="POST", body=json.dumps({"compression": "xz"}))
    assert again.code == 200 and (await body(again))["id"] == task["result"]["id"]
    assert len([p for p in image_dir.iterdir() if p.suffix == ".sqfs"]) == 1


needs_fuse = pytest.mark.skipif(
    not os.path.exists("/dev/fuse") or shutil.which("squashfuse") is None,
    reason="squashfuse or /dev/fuse missing: image kernels cannot mount here",
)


@needs_fuse
async def test_deleting_an_image_stops_its_kernels_and_removes_its_kernelspec_and_mount(
    api, jp_fetch, image_dir
):
    _, task = await pack(api)
    image = task["result"]
    kernel = await body(await api("images", image["id"], "kernel", method="POST", body=b"{}"))
    kernel_id = await start_session(jp_fetch, kernel["kernel_name"], "from-image.ipynb")
    mount = Path(kernel["prefix"])
    await wait_until(mount.is_mount, within=60, what="the kernel's launcher mounting the image")
    refused = await error(api("images", image["id"], method="DELETE"), 409)
    assert "from-image.ipynb" in refused["message"] and Path(image["path"]).exists()
    await body(await api("images", image["id"], method="DELETE", params={"shutdown_kernels": "true"}))
    assert kernel_id not in {k["id"] for k in await body(await jp_fetch("api", "kernels"))}
    assert kernel["kernel_name"] not in (await body(await jp_fetch("api", "kernelspecs")))["kernelspecs"]
    assert not mount.is_mount() and not Path(image["path"]).exists()


@needs_fuse
async def test_a_server_sweeps_stale_mounts_at_start_and_unmounts_at_stop(api, jp_serverapp, tmp_path):
    from jupyter_gpu_env.images import mounts

    _, task = await pack(api)
    image = task["result"]
    stale = mounts.mount_root() / image["id"]
    stale.mkdir(parents=True, exist_ok=True)
    subprocess.run(["squashfuse", image["path"], str(stale)], check=True)  # left by a killed server
    assert stale.is_mount()
    app = jp_serverapp.extension_manager.extension_apps["jupyter_gpu_env"]
    (ext,) = app
    services = ext.build_services(str(tmp_path))
    await services.start()
    try:
        assert not stale.is_mount()
        stale.mkdir(parents=True, exist_ok=True)
        subprocess.run(["squashfuse", image["path"], str(stale)], check=True)  # a kernel mounted it
    finally:
        await services.stop()
    assert not stale.is_mount()
