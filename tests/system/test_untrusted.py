"""Files someone else controls: read only when regular, never waiting on a named pipe, bounded."""

import concurrent.futures
import contextlib
import os

import pytest

from jupyter_gpu_env.errors import FileRefused
from jupyter_gpu_env.system.untrusted import (
    append_regular_file,
    copy_regular_file,
    read_regular_file,
    read_regular_head,
)


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "environment.yml"
    os.mkfifo(path)
    yield path
    # A reader stuck on it (the bug guarded against) gets its writer and lets go.
    with contextlib.suppress(OSError):
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


def test_a_named_pipe_is_refused_without_waiting_for_a_writer(fifo):
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        reading = pool.submit(read_regular_file, fifo, 100, name="environment.yml")
        with pytest.raises(FileRefused) as e:
            reading.result(timeout=30)
    assert e.value.status == 400 and e.value.reason == "not_a_regular_file"
    assert e.value.message == (
        "'environment.yml' is a named pipe (FIFO), not a regular file; only regular files are read."
    )
    assert isinstance(e.value, OSError)  # code that skips unreadable files skips it


@pytest.mark.parametrize(("path", "what"), [("/dev/zero", "a device"), ("/", "a folder")])
def test_devices_and_folders_are_refused(path, what):
    with pytest.raises(FileRefused, match=f"is {what}, not a regular file"):
        read_regular_file(path, 100)
    with pytest.raises(FileRefused, match=f"is {what}, not a regular file"):
        read_regular_head(path, 100)


def test_at_most_limit_bytes_are_read(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 2048)
    assert read_regular_file(path, 2048) == b"x" * 2048
    with pytest.raises(FileRefused, match=r"'f' is larger than 1 KiB") as e:
        read_regular_file(path, 1024, name="f")
    with pytest.raises(FileRefused, match=r"is larger than 2047 bytes"):
        read_regular_file(path, 2047)
    assert e.value.reason == "file_too_large"
    assert read_regular_head(path, 10) == b"x" * 10


def test_links_are_followed_and_missing_files_are_the_os_error(tmp_path):
    (tmp_path / "real").write_bytes(b"data")
    (tmp_path / "link").symlink_to("real")
    assert read_regular_file(tmp_path / "link", 10) == b"data"
    with pytest.raises(FileNotFoundError):
        read_regular_file(tmp_path / "none", 10)


def test_appending_to_a_named_pipe_is_refused_read_or_not(fifo, tmp_path):
    with pytest.raises(FileRefused, match="is a named pipe"):  # nobody reads it
        append_regular_file(fifo, b"entry\n")
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        with pytest.raises(FileRefused, match="is a named pipe"):  # someone does
            append_regular_file(fifo, b"entry\n")
        assert os.read(reader, 100) == b""  # nothing was written to it
    finally:
        os.close(reader)
    log = tmp_path / "log"
    append_regular_file(log, b"one\n")
    append_regular_file(log, b"two\n")
    assert log.read_bytes() == b"one\ntwo\n"


def test_a_copy_streams_a_regular_file_and_refuses_a_pipe(fifo, tmp_path):
    src = tmp_path / "big"
    src.write_bytes(os.urandom(3 << 20))
    os.chmod(src, 0o751)
    copy_regular_file(src, tmp_path / "copy")
    assert (tmp_path / "copy").read_bytes() == src.read_bytes()
    assert (tmp_path / "copy").stat().st_mode & 0o777 == 0o751
    with pytest.raises(FileRefused, match="is a named pipe"):
        copy_regular_file(fifo, tmp_path / "pipe-copy")
