"""A pack onto a full disk says so, with what the image needs and what is free, as a clone does: the
real packer (conda-pack's plan, mksquashfs) writing to a small filesystem of its own (tmpfs; mounting
one needs root, as CI has)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from jupyter_gpu_env.errors import DiskFull
from jupyter_gpu_env.images import pack

pytestmark = pytest.mark.skipif(shutil.which("mksquashfs") is None, reason="squashfs-tools not installed")


@pytest.fixture
def small_disk(tmp_path):
    folder = tmp_path / "images"
    folder.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {done.stderr.decode().strip()}")
    (folder / ".pack-x.staging").mkdir()  # as the image service makes it, before the packer starts
    yield folder
    subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(disk: Path) -> None:
    """Leave no byte free on ``disk``."""
    with open(disk / "filler", "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:
            pass
    assert shutil.disk_usage(disk).free == 0


async def pack_into(prefix: Path, disk: Path) -> DiskFull:
    staging = disk / ".pack-x.staging"
    with pytest.raises(DiskFull) as err:
        await pack.squashfs_image(
            prefix, disk / ".pack-x.partial", "/opt/env", "zstd", lambda f, m: None, staging=staging
        )
    return err.value


def said_sizes(message: str, disk: Path) -> None:
    assert message.startswith(f"The disk holding {disk} is full, so the image could not be written")
    assert re.search(
        r"It needs up to about \d+ MB \(the environment's size, before compression\), and \d+ MB (is|are) free\.",
        message,
    ), message


async def test_a_pack_that_fills_the_disk_says_what_it_needs_and_what_is_free(demo, small_disk):
    err = await pack_into(demo.env, small_disk)
    assert err.status == 507 and err.reason == "disk_full"
    said_sizes(err.message, small_disk)


async def test_a_pack_onto_a_full_disk_is_named_so_whatever_conda_pack_said(small_disk, tmp_path):
    """The disk full before the pack began, with the package cache on it half written: conda-pack
    finds a package's info/files missing. It used to be 'not_packable' with those words alone."""
    prefix, pkgs = tmp_path / "env", tmp_path / "pkgs"
    (prefix / "conda-meta").mkdir(parents=True)
    (prefix / "lib").mkdir()
    (prefix / "lib" / "data.txt").write_text("data\n")
    (pkgs / "data-1.0-0").mkdir(parents=True)  # extracted no further than its folder
    record = {
        "name": "data", "version": "1.0", "build": "0", "build_number": 0, "files": ["lib/data.txt"],
        "link": {"source": str(pkgs / "data-1.0-0"), "type": 1},
    }  # fmt: skip
    (prefix / "conda-meta" / "data-1.0-0.json").write_text(json.dumps(record))
    fill(small_disk)
    err = await pack_into(prefix, small_disk)
    assert err.reason == "disk_full"
    said_sizes(err.message, small_disk)
    assert "info/files" in err.message  # what conda-pack said is kept, after the full disk
