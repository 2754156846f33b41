"""Render the configuration reference (docs/configuration.md) from the traitlets themselves."""

from __future__ import annotations

import sys
from typing import Any

from traitlets import HasTraits, TraitType
from traitlets.config import Configurable


def _default(trait: TraitType[Any, Any]) -> str:
    value = trait.default_value_repr()
    return "(computed at start)" if value in ("traitlets.Undefined", "<Undefined>") else value


def _section(cls: type[HasTraits], traits: dict[str, TraitType[Any, Any]]) -> list[str]:
    lines = [f"## `c.{cls.__name__}`", "", (cls.__doc__ or "").strip(), ""]
    lines += ["| option | type | default | meaning |", "| --- | --- | --- | --- |"]
    for name, trait in sorted(traits.items()):
        help_text = " ".join((trait.help or "").split()).replace("|", "\\|")
        lines.append(f"| `{name}` | {type(trait).__name__} | `{_default(trait)}` | {help_text} |")
    return [*lines, ""]


def render() -> str:
    from ..app import GpuEnvApp
    from ..options import GpuEnvOptions

    lines = [
        "# Configuration reference",
        "",
        "Generated from the code by `python -m jupyter_gpu_env.cli.configdoc > docs/configuration.md`;",
        "a test fails when this file is stale. Put options in `jupyter_server_config.py` (for example",
        "`c.GpuEnvApp.gpu_sample_interval = 1.0`) or pass them on the command line",
        "(`jupyter lab --GpuEnvApp.gpu_sample_interval=1.0`). Every option has a working default.",
        "",
    ]
    # GpuEnvOptions' own and those of the classes it is made of (NotificationOptions), not ExtensionApp's.
    own = {
        n: tr
        for n, tr in GpuEnvOptions.class_traits(config=True).items()
        if n not in Configurable.class_traits()
    }
    lines += _section(GpuEnvApp, own)
    backends: list[type[Configurable]] = GpuEnvApp.classes
    for cls in sorted(backends, key=lambda c: c.__name__):
        # A backend's options include those of the classes it builds on (KubernetesOptions).
        lines += _section(cls, cls.class_traits(config=True))
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
