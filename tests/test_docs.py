import re
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


def test_every_relative_link_of_the_docs_leads_to_a_file():
    """README.md and docs/*.md link each other (the user guide moved out of the README): a moved or
    renamed page must not leave a link behind."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = [
        f"{page.relative_to(ROOT)}: {target}"
        for page in pages
        for target in re.findall(r"\]\(([^)#\s]+)[^)]*\)|src=\"([^\"]+)\"", page.read_text())
        for target in [t for t in target if t]
        if "://" not in target and not (page.parent / target).exists()
    ]
    assert len(pages) > 8 and broken == []
