"""Recorded outputs of NVIDIA tools, read in place from ``../shared/fixtures/gpu`` beside the repo.

They are never copied into the project; where the folder is absent the tests that need it skip.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .fake_nvml import FakeNvml, capture_facts

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "gpu"


@pytest.fixture(scope="session")
def gpu_fixtures() -> Path:
    if not FIXTURES.is_dir():
        pytest.skip(f"recorded GPU outputs are not at {FIXTURES} (../shared/fixtures/gpu beside the repo)")
    return FIXTURES


@pytest.fixture(scope="session")
def fixture_text(gpu_fixtures: Path) -> Callable[[str], str]:
    def read(name: str) -> str:
        return (gpu_fixtures / name).read_text()

    return read


@pytest.fixture(scope="session")
def section(fixture_text: Callable[[str], str]) -> Callable[[str, str, str], str]:
    """The body of one ``# <phase> :: ...`` / ``# $ <command>`` section of a capture."""
    from jupyter_gpu_env.gpu.sources.recorded import parse_capture

    def get(name: str, phase: str, command: str) -> str:
        for s in parse_capture(fixture_text(name)):
            if s.phase == phase and s.command == command:
                return s.body
        raise LookupError(f"{name} has no {phase} section for {command!r}")

    return get


@pytest.fixture
def fake(fixture_text: Callable[[str], str]) -> Callable[..., FakeNvml]:
    """``fake(capture, phase="load", **kw)``: a fake NVML answering from one recorded capture."""

    def build(name: str, phase: str = "load", **kwargs: object) -> FakeNvml:
        return FakeNvml(capture_facts(fixture_text(name), phase), **kwargs)  # type: ignore[arg-type]

    return build
