"""The job folder read as untrusted input: what a job's own code can leave there is refused or bounded,
quickly, and concerns that job alone."""

from __future__ import annotations

import json
import os
import threading
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from jupyter_gpu_env.contracts import jobfiles
from jupyter_gpu_env.gpu.jobuse import SERIES, WHOLE_SERIES, read_series
from jupyter_gpu_env.jobs.sweeps.results import read_recorded
from jupyter_gpu_env.jobs.tracking import read_folder


def returns_within(fn: Callable[[], Any], seconds: float = 10.0) -> Any:
    """``fn()``'s result; fails when it is still blocked after ``seconds`` (a read waiting on a FIFO)."""
    out: list[Any] = []
    t = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "the read is still blocked"
    return out[0]


def damaged(fn: Callable[[], Any]) -> str:
    def call() -> str:
        with pytest.raises(jobfiles.Damaged) as caught:
            fn()
        return str(caught.value)

    return str(returns_within(call))


def test_progress_beyond_any_notebook_is_damaged(tmp_path):
    (tmp_path / jobfiles.PROGRESS).write_text('{"cells_done": 1e999, "cells_total": 3}')
    assert "progress.json is damaged" in damaged(lambda: jobfiles.read_progress(tmp_path))
    (tmp_path / jobfiles.PROGRESS).write_text('{"cells_done": 4, "cells_total": 3}')
    assert "more than cells_total" in damaged(lambda: jobfiles.read_progress(tmp_path))
    (tmp_path / jobfiles.PROGRESS).write_text('{"cells_done": 2, "cells_total": 3}')
    assert jobfiles.read_progress(tmp_path) == jobfiles.Progress(cells_done=2, cells_total=3)


@pytest.mark.parametrize("name", [jobfiles.PROGRESS, jobfiles.STATUS, jobfiles.PID, jobfiles.GPU_SUMMARY])
def test_a_fifo_or_a_link_to_a_device_is_refused_at_once(tmp_path, name):
    os.mkfifo(tmp_path / name)
    reads = {
        jobfiles.PROGRESS: jobfiles.read_progress,
        jobfiles.PID: jobfiles.read_pid,
        jobfiles.GPU_SUMMARY: jobfiles.read_gpu,
    }
    if name == jobfiles.STATUS:
        status = returns_within(lambda: jobfiles.read_status(tmp_path))
        assert status["reason"] == "files_damaged" and "(FIFO)" in status["message"]
    else:
        assert "is a named pipe (FIFO)" in damaged(lambda: reads[name](tmp_path))
        (tmp_path / name).unlink()
        (tmp_path / name).symlink_to("/dev/zero")
        assert "is a device" in damaged(lambda: reads[name](tmp_path))


def test_a_runaway_file_is_not_read_whole(tmp_path):
    (tmp_path / jobfiles.PROGRESS).write_bytes(b" " * (jobfiles.MAX_SMALL + 1))
    assert "larger than 4 KiB" in damaged(lambda: jobfiles.read_progress(tmp_path))


def test_a_status_claiming_a_start_at_zero_reads_as_damaged(tmp_path):
    (tmp_path / jobfiles.STATUS).write_text(json.dumps({"state": "succeeded", "started_at": 0}))
    status = jobfiles.read_status(tmp_path)
    assert status is not None
    assert (status["state"], status["reason"]) == ("failed", "files_damaged")
    assert "started_at" in status["message"]


def test_a_gpu_summary_over_100_percent_is_damaged_and_said_so(tmp_path):
    summary = {"available": True, "samples": 3, "mean_utilization_percent": 5000.0}
    (tmp_path / jobfiles.GPU_SUMMARY).write_text(json.dumps(summary))
    files = read_folder(tmp_path)
    assert files.gpu is not None and not files.gpu.available
    assert "gpu.json is damaged" in (files.gpu.reason or "")
    assert files.damaged and "mean_utilization_percent" in files.damaged[0]


@pytest.mark.parametrize("energy", ["-1", "NaN", "Infinity", "1e300", '"lots"'])
def test_an_energy_that_cannot_be_is_refused_with_the_summary(tmp_path, energy):
    """Negative, not finite, beyond any bound or not a number: the summary is not believed, and says so."""
    text = '{"available": true, "samples": 3, "energy_source": "counter", "energy_joules": ' + energy + "}"
    (tmp_path / jobfiles.GPU_SUMMARY).write_text(text)
    files = read_folder(tmp_path)
    assert files.gpu is not None and not files.gpu.available and files.gpu.energy_joules is None
    assert "gpu.json is damaged" in (files.gpu.reason or "")
    assert files.damaged and "energy_joules" in files.damaged[0]


def test_the_log_of_a_fifo_is_damaged_not_a_hang(tmp_path):
    os.mkfifo(tmp_path / jobfiles.LOG)
    assert "FIFO" in damaged(lambda: jobfiles.read_log(tmp_path / jobfiles.LOG, 0, 100))


def _series(path: Path, samples: int) -> None:
    with open(path / SERIES, "w") as f:
        f.write(json.dumps({"devices": [{"name": "GPU 0"}], "interval": 1, "started": 1e9}) + "\n")
        for i in range(samples):
            f.write(f"[{i}.0,[{i % 100}],[{i * 1000}]]\n")


def test_a_huge_gpu_series_is_sampled_by_seeking_not_read_whole(tmp_path):
    _series(tmp_path, 1_000_000)  # about 25 MB: the size the auditor saw took 3.9 GB to read whole
    assert (tmp_path / SERIES).stat().st_size > 4 * WHOLE_SERIES
    tracemalloc.start()
    try:
        devices, points = read_series(tmp_path, max_points=100)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 << 20, f"reading the series took {peak / 2**20:.1f} MiB"
    assert devices == [{"name": "GPU 0"}]
    assert 90 <= len(points) <= 100
    assert points[0][0] < 20_000 and points[-1][0] > 980_000  # spread over the whole run


def test_series_lines_out_of_range_or_of_another_shape_are_skipped(tmp_path):
    _series(tmp_path, 3)
    with open(tmp_path / SERIES, "a") as f:
        f.write("[4.0,[5000],[1]]\n[5.0,[1],[-1]]\n[6.0,[1,2],[1,2]]\n" + "[" * 100_000 + "\n")
    _, points = read_series(tmp_path)
    assert [p[0] for p in points] == [0.0, 1.0, 2.0]
    (tmp_path / SERIES).unlink()
    os.mkfifo(tmp_path / SERIES)
    assert returns_within(lambda: read_series(tmp_path)) == ([], [])


def test_an_output_notebook_that_is_a_fifo_is_noted_not_waited_on(tmp_path):
    """It once held the server's one thread for Python work: submissions and listings hung behind it."""
    out = tmp_path / "run.ipynb"
    os.mkfifo(out)
    recorded = returns_within(lambda: read_recorded(out))
    assert recorded is not None and recorded.values == {}
    assert "(FIFO)" in recorded.notes[0]
    out.unlink()
    out.write_text("[" * 100_000)
    recorded = read_recorded(out)
    assert recorded is not None and "could not be read" in recorded.notes[0]


def test_the_time_limit_a_backend_gives_the_runner_stands_over_job_json():
    spec = {"time_limit_seconds": 5}
    assert jobfiles.time_limit_of(spec, {}) == 5.0
    assert jobfiles.time_limit_of(spec, {jobfiles.TIME_LIMIT_ENV: "60"}) == 60.0
    assert jobfiles.time_limit_of(spec, {jobfiles.TIME_LIMIT_ENV: "0"}) is None  # the record has none
    assert jobfiles.time_limit_of({"time_limit_seconds": None}, {jobfiles.TIME_LIMIT_ENV: "7"}) == 7.0
    for odd in ({"time_limit_seconds": True}, {"time_limit_seconds": "5"}, {"time_limit_seconds": -1}, {}):
        assert jobfiles.time_limit_of(odd, {}) is None
