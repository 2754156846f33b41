from pathlib import Path

from jupyter_gpu_env.cli import configdoc
from jupyter_gpu_env.options import GpuEnvOptions

ROOT = Path(__file__).resolve().parents[1]


def test_configuration_reference_is_current():
    assert (ROOT / "docs" / "configuration.md").read_text() == configdoc.render(), (
        "docs/configuration.md is stale: run `python -m jupyter_gpu_env.cli.configdoc > docs/configuration.md`"
    )


def test_every_option_has_help():
    for name, trait in GpuEnvOptions.class_own_traits(config=True).items():
        assert len((trait.help or "").split()) >= 5, f"c.GpuEnvApp.{name} needs help text"


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci in (ROOT / "README.md").read_text()
