"""The staging-free pack holds exactly what conda-pack's own squashfs holds, file for file.

Both pack the same environment for the same destination prefix: conda-pack with its CLI (staging
folder, `--format squashfs`), ours through `pack.squashfs_image`. Both images are extracted and compared:
the same paths, kinds, permission bits, symlink targets and bytes.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import wait_until

from jupyter_gpu_env.errors import Conflict
from jupyter_gpu_env.images import pack, squash

pytestmark = pytest.mark.skipif(shutil.which("mksquashfs") is None, reason="squashfs-tools not installed")

DEST = "/opt/gpu-env/packed"


@pytest.fixture(scope="module")
def env(demo, tmp_path_factory) -> Path:
    """A hard-linked copy of the demo environment with untracked files of every kind conda-pack handles."""
    prefix = tmp_path_factory.mktemp("squash") / "env"
    subprocess.run(["cp", "-al", str(demo.env), str(prefix)], check=True)
    (prefix / "bin" / "mytool").write_text(f"#!{prefix}/bin/python\nprint('mine')\n")
    (prefix / "bin" / "mytool").chmod(0o755)
    (prefix / "share" / "blob.bin").write_bytes(b"\xff\xfe not UTF-8 " + str(prefix).encode() + b"\0")
    odd = prefix / "share" / 'odd "name" with spaces.txt'
    odd.write_text(f"data lives in {prefix}/share\n")
    (prefix / "share" / "plain.txt").write_text("nothing to rewrite\n")
    (prefix / "share" / "link-to-plain").symlink_to("plain.txt")
    return prefix


def _tree(root: Path) -> dict[str, tuple[str, int, bytes]]:
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            rel = str(path.relative_to(root))
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", 0, os.readlink(path).encode())
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode), b"")
            else:
                out[rel] = ("file", stat.S_IMODE(st.st_mode), path.read_bytes())
    return out


def _extract(image: Path, where: Path) -> dict[str, tuple[str, int, bytes]]:
    subprocess.run(["unsquashfs", "-q", "-n", "-d", str(where), str(image)], check=True)
    return _tree(where)


def test_the_image_is_conda_packs_file_for_file(env, tmp_path):
    theirs = tmp_path / "conda-pack.sqfs"
    conda_pack = [sys.executable, "-c", "import sys; from conda_pack.cli import main; sys.exit(main())"]
    subprocess.run(
        [*conda_pack, "-q", "-p", str(env), "-o", str(theirs), "--format", "squashfs", "--dest-prefix", DEST],
        check=True,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        stdout=subprocess.DEVNULL,
    )
    ours = tmp_path / "ours.sqfs"
    staging = tmp_path / 'staging "area"'  # the pseudo definitions quote the staged files' paths too
    staging.mkdir()
    messages: list[str] = []
    asyncio.run(
        pack.squashfs_image(env, ours, DEST, "zstd", lambda f, m: messages.append(m), staging=staging)
    )

    expected, got = _extract(theirs, tmp_path / "theirs"), _extract(ours, tmp_path / "ours")
    assert sorted(got) == sorted(expected)
    differing = [rel for rel in expected if got[rel] != expected[rel]]
    assert differing == []
    # The untracked files were handled as conda-pack handles them: text rewritten, binary (not UTF-8) kept.
    assert got["bin/mytool"][2].startswith(f"#!{DEST}/bin/python".encode())
    assert got['share/odd "name" with spaces.txt'][2] == f"data lives in {DEST}/share\n".encode()
    assert str(env).encode() in got["share/blob.bin"][2]
    # A rewritten file keeps the original's modification time (squashfs holds whole seconds).
    record = next(rel for rel in got if re.fullmatch(r"conda-meta/.+\.json", rel))
    for rel in ("bin/mytool", record):
        assert (tmp_path / "ours" / rel).stat().st_mtime == int((env / rel).stat().st_mtime), rel
    assert any(re.fullmatch(rf"\d+ files, \d+ rewritten for {DEST}", m) for m in messages), messages


async def test_a_packer_started_ahead_serves_the_pack(env, tmp_path):
    packers = pack.packers()
    await packers.warm_up()
    spare = packers._spare
    assert spare is not None and spare.alive
    staging = tmp_path / "staging"
    staging.mkdir()
    await pack.squashfs_image(
        env, tmp_path / "o.sqfs", DEST, "zstd", lambda f, m: None, staging=staging, processes=packers
    )
    assert not spare.alive  # it became mksquashfs, which is done
    following = await wait_until(lambda: packers._spare, what="the next spare packer")
    assert following is not spare and following.alive
    await packers.close()
    assert not following.alive
    assert subprocess.run(
        ["unsquashfs", "-l", str(tmp_path / "o.sqfs")], capture_output=True, check=True
    ).stdout


def test_only_the_changed_files_are_written_aside(env, tmp_path):
    decided = squash.plan(env, DEST, tmp_path)
    staged = {r.target for r in decided.rewritten}
    assert "bin/mytool" in staged and 'share/odd "name" with spaces.txt' in staged
    assert "share/plain.txt" not in staged and "share/blob.bin" not in staged
    assert len(staged) < decided.files / 50  # a few dozen of thousands
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(r.staged.name for r in decided.rewritten)


def test_an_unreadable_name_is_refused_clearly(env, tmp_path):
    weird = env / "share" / "line\nbreak.txt"
    weird.write_text(f"{env}\n")
    try:
        with pytest.raises(squash.UnpackableName, match="line break"):
            squash.plan(env, DEST, tmp_path)
    finally:
        weird.unlink()


def test_the_plan_counts_the_packed_bytes(env, tmp_path):
    on_disk = sum(
        (Path(folder) / name).lstat().st_size
        for folder, _, files in os.walk(env)
        if "conda-meta" not in Path(folder).parts
        for name in files
    )
    decided = squash.plan(env, DEST, tmp_path)
    # Records give the packages' sizes; untracked files (bin/mytool, share/blob.bin ...) are measured.
    assert 0.9 * on_disk <= decided.size_bytes <= on_disk


def test_a_large_environment_is_compressed_faster():
    assert squash.zstd_level(140 << 20) == squash.ZSTD_LEVEL == 6
    assert squash.zstd_level(squash.LARGE_BYTES) == 6
    assert squash.zstd_level(squash.LARGE_BYTES + 1) == squash.LARGE_ZSTD_LEVEL == 3


def test_the_settings_are_those_measured():
    argv = squash.mksquashfs_argv(
        Path("/e"), Path("/o"), compression="zstd", processors=2, pseudo_file=None, exclude_file=None
    )
    assert argv[argv.index("-Xcompression-level") + 1] == str(squash.ZSTD_LEVEL)
    fast = squash.mksquashfs_argv(
        Path("/e"), Path("/o"), compression="zstd", processors=2, pseudo_file=None, exclude_file=None, level=3
    )
    assert fast[fast.index("-Xcompression-level") + 1] == "3"
    assert argv[argv.index("-b") + 1] == str(1 << 20) and argv[argv.index("-processors") + 1] == "2"
    xz = squash.mksquashfs_argv(
        Path("/e"),
        Path("/o"),
        compression="xz",
        processors=1,
        pseudo_file=Path("/p"),
        exclude_file=Path("/x"),
    )
    assert xz[xz.index("-comp") + 1] == "xz" and xz[-4:] == ["-pf", "/p", "-ef", "/x"]


def test_an_environment_conda_pack_refuses_is_a_conflict_that_says_why(demo, tmp_path):
    broken = tmp_path / "broken"
    subprocess.run(["cp", "-al", str(demo.env), str(broken)], check=True)
    (broken / "lib" / "python3.11" / "os.py").unlink()  # a file conda installed, deleted by hand
    staging = tmp_path / 'staging "area"'  # the pseudo definitions quote the staged files' paths too
    staging.mkdir()
    with pytest.raises(Conflict) as refused:
        asyncio.run(
            pack.squashfs_image(broken, tmp_path / "x.sqfs", DEST, "zstd", lambda f, m: None, staging=staging)
        )
    assert refused.value.reason == "not_packable"
    assert "conda-pack cannot pack this environment" in refused.value.message
    assert "os.py" in refused.value.message
    assert not (tmp_path / "x.sqfs").exists()


def test_forked_work_returns_its_result_or_raises_its_error():
    assert squash.forked(sum, [1, 2, 3])() == 6
    with pytest.raises(ValueError, match="invalid literal"):
        squash.forked(int, "not a number")()


def test_one_walk_lists_the_environment_as_conda_pack_does(env, tmp_path):
    """The plan's one walk gives conda-pack's ``load_files`` list element for element, odd entries
    included, and every path on disk for the exclude list."""
    from conda_pack.core import load_files

    odd = tmp_path / "odd"
    shutil.copytree(env / "conda-meta", odd / "conda-meta")
    (odd / "top.txt").write_text("x")
    (odd / "notes~").write_text("an editor's backup at the top is ignored")
    (odd / "pkgs" / "cached").mkdir(parents=True)  # conda's package cache: not descended into
    (odd / "pkgs" / "cached" / "f").write_text("x")
    (odd / "lib" / "empty").mkdir(parents=True)
    (odd / "lib" / "holds-a-link").mkdir()
    (odd / "lib" / "holds-a-link" / "to-lib").symlink_to("..")
    (odd / "lib" / "to-file").symlink_to("../top.txt")
    (odd / "lib" / "broken").symlink_to("nowhere")
    (odd / "lib" / "backup~").write_text("below the top, kept")
    os.mkfifo(odd / "lib" / "fifo")
    (odd / "dir-link").symlink_to("lib")
    (odd / "file-link").symlink_to("top.txt")
    os.mkfifo(odd / "top-fifo")
    for prefix in (env, odd):
        root = os.path.realpath(prefix)
        on_disk, listed = squash._walk(root)
        assert listed == load_files(root)
        expected = {
            str(p.relative_to(prefix)): p.is_dir() and not p.is_symlink()
            for p in prefix.rglob("*")
            if not p.relative_to(prefix).parts[0] == "pkgs" or len(p.relative_to(prefix).parts) == 1
        }
        assert on_disk == expected
    assert {"lib/empty", "lib/holds-a-link/to-lib", "lib/broken", "lib/fifo", "dir-link"} <= listed
    assert "pkgs" in on_disk and "pkgs/cached" not in on_disk and "notes~" not in listed
