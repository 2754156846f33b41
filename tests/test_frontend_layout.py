"""The frontend's shape, checked on its source: its top-level folders import one another one way only.

``labextension/src`` has a folder per feature (``jobs/``, ``schedules/``, ``pipelines/``, …) over shared
ones (``api/``, ``components/``, ``sidebar/``). A feature that needs another's piece imports it; a
feature that wants to add to another (a row in its list, a field in its dialog) goes through the
other's token instead, so that the dependency points one way and each folder reads alone. These tests
read every ``.ts``/``.tsx`` module's relative imports (``import … from``, ``import type``, ``export …
from``, ``import('…')``) with a regular expression, resolve them to the top-level folder they land in,
and refuse two folders that import each other or any longer loop of folders. Only sources are read;
nothing is built.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from helpers import import_cycles

ROOT = Path(__file__).resolve().parents[1]
FRONTEND = ROOT / "labextension" / "src"
GENERATED = {FRONTEND / "api" / "schema.d.ts"}  # openapi-typescript's output: no imports of ours

# `import x from '../a/b'`, `import type { X } from './c'`, `export { y } from '../d'`,
# `import '../e'` and `import('../f')`; only relative specifiers are ours.
IMPORT = re.compile(
    r"""(?:^|;|\n)\s*(?:import|export)\b[^'";]*?\bfrom\s*['"](?P<from>\.{1,2}/[^'"]*)['"]"""
    r"""|(?:^|;|\n)\s*import\s*['"](?P<bare>\.{1,2}/[^'"]*)['"]"""
    r"""|\bimport\(\s*['"](?P<dynamic>\.{1,2}/[^'"]*)['"]\s*\)"""
)

# The root modules (index.ts: the list of plugins) are not a folder: they name every plugin by design.
ROOT_NAME = "."


def _sources() -> list[Path]:
    return sorted(p for p in [*FRONTEND.rglob("*.ts"), *FRONTEND.rglob("*.tsx")] if p not in GENERATED)


def _folder(path: Path) -> str:
    """The top-level folder of ``src`` a module (or an import's target) is in: ``jobs`` for
    ``jobs/submit/form.ts``, ``.`` for ``index.ts``."""
    parts = path.relative_to(FRONTEND).parts
    return parts[0] if len(parts) > 1 else ROOT_NAME


def _imports(path: Path) -> list[tuple[str, Path]]:
    """Each relative import of ``path``: as written, and resolved (without an extension)."""
    found = []
    for match in IMPORT.finditer(path.read_text()):
        spec = match.group("from") or match.group("bare") or match.group("dynamic")
        found.append((spec, Path(os.path.normpath(path.parent / spec))))
    return found


def _folder_graph() -> dict[str, dict[str, list[str]]]:
    """Folder -> folder it imports -> the imports that make the edge (``module -> target``)."""
    graph: dict[str, dict[str, list[str]]] = {}
    for path in _sources():
        source = _folder(path)
        graph.setdefault(source, {})
        for spec, target in _imports(path):
            assert FRONTEND in target.parents, f"{path} imports {spec}, outside labextension/src"
            folder = _folder(target)
            if folder != source:
                graph[source].setdefault(folder, []).append(
                    f"{path.relative_to(FRONTEND)} -> {target.relative_to(FRONTEND)}"
                )
    return graph


GRAPH = _folder_graph()


def _edges() -> dict[str, set[str]]:
    return {source: set(targets) for source, targets in GRAPH.items()}


def test_the_import_graph_is_read():
    # Guards the reader itself: a reader that found nothing would pass every rule below.
    assert "api" in GRAPH["jobs"], "jobs/ imports the api client (jobs/client.ts -> api/request)"
    assert "jobs/client.ts -> api/request" in GRAPH["jobs"]["api"]
    assert "sidebar" in GRAPH["environments"], "environments/plugin.ts imports sidebar/tokens"
    assert "components" in GRAPH["jobs"], "jobs/ imports components/ (type-only and value imports)"
    # Each feature folder is listed, so that a folder whose imports were all missed would show.
    assert {"jobs", "schedules", "pipelines", "notifications", "advice", "gpu"} <= GRAPH.keys()


def test_the_reader_resolves_the_import_forms():
    text = (
        "import { A } from '../a/x';\n"
        "import type { B } from './b';\n"
        "export { C } from '../c/y';\n"
        "import '../d/style';\n"
        "const e = import('../e/z');\n"
        "import { F } from '@lumino/f';\n"
    )
    specs = []
    for match in IMPORT.finditer(text):
        specs.append(match.group("from") or match.group("bare") or match.group("dynamic"))
    assert specs == ["../a/x", "./b", "../c/y", "../d/style", "../e/z"]


def test_no_two_frontend_folders_import_each_other():
    edges = _edges()
    both = sorted(
        f"{a} <-> {b}: {GRAPH[a][b][0]}; {GRAPH[b][a][0]}"
        for a in edges
        for b in edges[a]
        if a < b and a in edges.get(b, set())
    )
    assert both == [], "frontend folders that import each other"


def test_no_frontend_folder_cycle():
    cycles = import_cycles(_edges())
    assert cycles == [], "frontend folders that reach themselves through others"


def test_the_cycle_finder_finds_a_loop():
    # The finder itself, on a loop of three and a clean chain beside it.
    graph = {
        "gpu": {"advice"},
        "advice": {"jobs"},
        "jobs": {"environments"},
        "environments": {"gpu"},
        "a": {"b"},
    }
    assert import_cycles(graph) == [["advice", "environments", "gpu", "jobs"]]
    assert import_cycles({"a": {"b"}, "b": {"c"}}) == []


def test_shared_folders_import_no_feature():
    # api/ and components/ are below every feature; the sidebar knows none of its sections.
    features = {"advice", "dask", "environments", "gpu", "images", "jobs", "notifications", "pipelines"}
    features |= {"batch-kernels", "schedules", "tasks"}
    reaching = {
        f"{low} -> {up}"
        for low in ("api", "components", "sidebar")
        for up in GRAPH.get(low, {})
        if up in features
    }
    assert reaching == set()
