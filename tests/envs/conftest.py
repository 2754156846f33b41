"""Fixtures of the environment tests: an offline wheelhouse."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import make_wheel


@pytest.fixture
def wheelhouse(demo, tmp_path) -> Path:
    """Our hand-made wheels and the demo's extra ones (six): an offline index."""
    folder = tmp_path / "wheelhouse"
    folder.mkdir()
    make_wheel(folder, "gpuenvmini", "1.0", value="one")
    make_wheel(folder, "gpuenvmini", "2.0", value="two")
    for wheel in demo.extra_wheels.glob("*.whl"):
        (folder / wheel.name).symlink_to(wheel)
    return folder
