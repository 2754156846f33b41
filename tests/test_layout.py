"""The package's shape, checked on its source: imports point down, no cycles, small folders and modules.

A newcomer should find a feature in one folder and read any module in one sitting; a cycle or a lower
layer reaching up makes both harder, and each one added quietly is how the last tangle began. So
these are tests, not a review checklist. Imports are read from the source (every ``import``, inside
functions and ``TYPE_CHECKING`` blocks too), not from what happens to be loaded.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import import_cycles

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "jupyter_gpu_env"
FRONTEND = ROOT / "labextension" / "src"
MAX_MODULES = 12
MAX_LINES = 400
GENERATED = {FRONTEND / "api" / "schema.d.ts"}  # openapi-typescript's output


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        if "labextension" in path.relative_to(PACKAGE).parts:
            continue
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imported(name: str, path: Path) -> Iterator[str]:
    """The package's modules that ``name`` imports (a submodule when one is named, else its package)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            subs = [f"{base}.{alias.name}" for alias in node.names]
            targets = [s for s in subs if s in MODULES] or [base]
        else:
            continue
        for target in targets:
            # A module's own packages run first anyway; that is not a dependency on them.
            if target in MODULES and target != name and not name.startswith(target + "."):
                yield target


GRAPH = {name: set(_imported(name, path)) for name, path in MODULES.items()}


def test_the_import_graph_is_read():
    # Guards the reader itself: a reader that found nothing would pass every rule below.
    assert "jupyter_gpu_env.errors" in GRAPH["jupyter_gpu_env.handlers.base"]
    assert "jupyter_gpu_env.handlers.base" in GRAPH["jupyter_gpu_env.handlers.gpu"]


def test_no_import_cycle():
    assert import_cycles(GRAPH) == [], "modules that import each other, directly or through others"


def _reaches(source: str, target: str) -> list[str]:
    return sorted(
        f"{name} imports {dep}"
        for name, deps in GRAPH.items()
        if name == source or name.startswith(source + ".")
        for dep in deps
        if dep == target or dep.startswith(target + ".")
    )


@pytest.mark.parametrize(
    ("lower", "upper"),
    [
        # Models describe the API; they know no service.
        *[("jupyter_gpu_env.models", f"jupyter_gpu_env.{up}") for up in ("envs", "jobs", "gpu", "images")],
        # GPU readings serve jobs, not the other way round.
        ("jupyter_gpu_env.gpu", "jupyter_gpu_env.jobs"),
        # The command line uses the services as the server does, not its HTTP layer.
        ("jupyter_gpu_env.cli", "jupyter_gpu_env.handlers"),
        # Nothing below the server knows tornado's handlers, the facade or the app.
        *[
            (f"jupyter_gpu_env.{low}", f"jupyter_gpu_env.{up}")
            for low in ("envs", "jobs", "gpu", "images", "models")
            for up in ("handlers", "services", "app")
        ],
    ],
)
def test_layers_point_down(lower, upper):
    assert _reaches(lower, upper) == []


def _top(module: str) -> str:
    """The top-level folder (or root module) a module belongs to: ``jobs`` for ``jupyter_gpu_env.jobs.x``."""
    return module.split(".")[1] if "." in module else module


def _folder_reaches() -> dict[str, set[str]]:
    reaches: dict[str, set[str]] = {}
    for name, deps in GRAPH.items():
        for dep in deps:
            if _top(name) != _top(dep):
                reaches.setdefault(_top(name), set()).add(_top(dep))
    return reaches


def test_no_two_folders_import_each_other():
    """Module cycles are refused above; this is the same at the scale a reader sees first: folder A
    reaching into B while B reaches into A makes neither one readable alone."""
    reaches = _folder_reaches()
    both = {frozenset({a, b}) for a, tos in reaches.items() for b in tos if a in reaches.get(b, set())}
    assert both == set(), "folders that import each other"


def test_no_folder_cycle():
    """Nor through a third: A reaching B, B reaching C and C reaching A is one knot to untie."""
    assert import_cycles(_folder_reaches()) == [], "folders that reach each other through others"


# The house, bottom up: the ground floor of contracts (what passes between the server and a node), the
# batch systems' wings over it, the jobs feature over those, the features that run on jobs over that.
GROUND = {"errors", "models", "system", "contracts", "_version"}
FEATURES = (
    "jobs",
    "schedules",
    "pipelines",
    "dask",
    "batchkernels",
    "envs",
    "images",
    "notify",
    "efficiency",
    "metrics",
)
TOP = ("cli", "handlers", "services", "app")


def test_the_layer_rules_name_folders_that_exist():
    # A rule over a folder that was renamed would pass for ever, checking nothing.
    named = {"models", "gpu", "cli", "envs", "images", "backends", "contracts", *FEATURES, *TOP} - {"app"}
    assert {f for f in named if f"jupyter_gpu_env.{f}" not in MODULES} == set()


def test_the_ground_floor_imports_nothing_above_it():
    assert _folder_reaches().get("contracts", set()) - GROUND == set()


@pytest.mark.parametrize("upper", [*FEATURES, *TOP])
def test_backends_know_no_feature(upper):
    """A backend is handed what a feature asks of it through the contract (backends/base.py and
    backends/dask.py, with the ground floor's documents); it never reaches into the feature."""
    assert _reaches("jupyter_gpu_env.backends", f"jupyter_gpu_env.{upper}") == []


@pytest.mark.parametrize(
    "upper", ["schedules", "pipelines", "dask", "batchkernels", "notify", "efficiency", "metrics"]
)
def test_jobs_know_no_feature_built_on_them(upper):
    """Schedules, pipelines and Dask clusters run on jobs; the jobs' code (store, service, runner)
    knows none of them: each feature owns its records and hands its own timers to the server."""
    assert _reaches("jupyter_gpu_env.jobs", f"jupyter_gpu_env.{upper}") == []


def _sources_outside(folder: str) -> Iterator[tuple[str, ast.AST]]:
    for name, path in MODULES.items():
        if name != folder and not name.startswith(folder + "."):
            yield name, ast.parse(path.read_text(), str(path))


SLURM_COMMANDS = {"sbatch", "squeue", "scancel", "scontrol", "sinfo", "sacct", "srun"}


def test_no_module_outside_the_slurm_wing_runs_a_slurm_command():
    """SLURM lives in backends/slurm/: no other module names a SLURM command as a value (an argv's
    first word, a command table's key). The keeper's generic command runner takes the argv it is given."""
    slurm = ast.parse(MODULES["jupyter_gpu_env.backends.slurm.controller"].read_text())
    assert any(
        isinstance(n, ast.Constant) and n.value == "sbatch" for n in ast.walk(slurm)
    )  # the reader sees
    found = sorted(
        f"{name}: {node.value}"
        for name, tree in _sources_outside("jupyter_gpu_env.backends.slurm")
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in SLURM_COMMANDS
    )
    assert found == []


def test_no_module_outside_the_kubernetes_wing_imports_the_kubernetes_client():
    found = sorted(
        name
        for name, tree in _sources_outside("jupyter_gpu_env.backends.kubernetes")
        for node in ast.walk(tree)
        if (isinstance(node, ast.Import) and any(a.name.split(".")[0] == "kubernetes" for a in node.names))
        or (
            isinstance(node, ast.ImportFrom)
            and not node.level
            and (node.module or "").split(".")[0] == "kubernetes"
        )
    )
    assert found == []


def _package_folders() -> Iterator[Path]:
    for folder in [PACKAGE, *PACKAGE.rglob("*")]:
        if folder.is_dir() and (folder / "__init__.py").exists() and "labextension" not in folder.parts:
            yield folder


def test_no_package_folder_over_twelve_modules():
    crowded = {
        str(folder.relative_to(ROOT)): n
        for folder in _package_folders()
        if (n := len(list(folder.glob("*.py")))) > MAX_MODULES
    }
    assert crowded == {}


def test_no_frontend_folder_over_twelve_modules():
    folders = [FRONTEND, *(p for p in FRONTEND.rglob("*") if p.is_dir())]
    crowded = {
        str(folder.relative_to(ROOT)): n
        for folder in folders
        if (n := len([p for p in folder.iterdir() if p.suffix in (".ts", ".tsx")])) > MAX_MODULES
    }
    assert crowded == {}


def test_no_module_over_four_hundred_lines():
    sources = [*MODULES.values(), *FRONTEND.rglob("*.ts"), *FRONTEND.rglob("*.tsx")]
    long = {
        str(path.relative_to(ROOT)): n
        for path in sources
        if path not in GENERATED and (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def _named_in(doc: str, path: Path, top: Path) -> bool:
    """Whether the architecture document names ``path``: by its path from ``top``, or by its file name
    in the row of its folder (the tables list a folder's modules by name)."""
    relative = path.relative_to(top).as_posix()
    if f"`{relative}`" in doc or f"`{relative.rsplit('.', 1)[0]}`" in doc:
        return True
    folder = path.parent.relative_to(top).as_posix()
    stem = path.name.rsplit(".", 1)[0]
    for line in doc.splitlines():
        if line.startswith(f"| `{folder}/`") and re.search(rf"`{re.escape(stem)}(\.\w+)?`", line):
            return True
    return False


def test_architecture_names_every_module():
    # The server's table comes first, the frontend's after its heading: gpu/ and images/ are in both.
    server_doc, _, frontend_doc = (ROOT / "docs" / "architecture.md").read_text().partition("### Frontend")
    assert frontend_doc, "docs/architecture.md has a '### Frontend' section"
    python = [p for p in MODULES.values() if p.name != "__init__.py" or p.parent == PACKAGE]
    frontend = [*FRONTEND.rglob("*.ts"), *FRONTEND.rglob("*.tsx")]
    missing = [str(p.relative_to(ROOT)) for p in python if not _named_in(server_doc, p, PACKAGE)]
    missing += [str(p.relative_to(ROOT)) for p in frontend if not _named_in(frontend_doc, p, FRONTEND)]
    assert missing == [], "docs/architecture.md does not name these modules"


def test_architecture_says_where_things_are_added():
    doc = (ROOT / "docs" / "architecture.md").read_text()
    for heading in (
        "## How a request flows",
        "## Adding a backend",
        "## Adding a sidebar section",
        "## Adding a scheduled or dependent run",
    ):
        assert heading in doc
