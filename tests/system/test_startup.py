"""The package's own processes start without rfc3987_syntax (system/startup.py), and lose nothing they use:
notebooks still validate, and jsonschema's other format checkers are there."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PROBE = """
import json, sys
{prelude}
import nbformat, papermill  # what a job's runner imports
from jsonschema import FormatChecker, ValidationError
nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")])
nbformat.validate(nb)
try:  # a code cell with no metadata, no outputs and a number for its source
    nbformat.v4.new_notebook(cells=[{{"cell_type": "code", "id": "a", "source": 1}}])
    refused = False
except ValidationError:
    refused = True
print(json.dumps({{
    "loaded": "rfc3987_syntax" in sys.modules and sys.modules["rfc3987_syntax"] is not None,
    "refused": refused,
    "formats": sorted(FormatChecker.checkers),
}}))
"""


def _probe(prelude: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(prelude=prelude)], capture_output=True, text=True, check=True
    )
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def test_a_lean_process_skips_the_iri_parsers_and_validates_notebooks_as_before():
    plain = _probe("")
    if not plain["loaded"]:
        pytest.skip("rfc3987_syntax is not installed here: nothing to skip")
    lean = _probe("from jupyter_gpu_env.system.startup import lean_start; lean_start()")
    assert lean["loaded"] is False
    assert plain["refused"] is True and lean["refused"] is True
    # only the two checkers rfc3987_syntax gives are gone
    assert set(plain["formats"]) - set(lean["formats"]) == {"iri", "iri-reference"}
    assert set(lean["formats"]) <= set(plain["formats"])


REPORT = (
    "import atexit, sys\n"
    "atexit.register(lambda: print({None: 'LEAN'}.get(sys.modules.get('rfc3987_syntax', 0), 'NOT LEAN'),"
    " file=sys.stderr))\n"
)


@pytest.mark.parametrize(
    "start",
    [
        # as SLURM, Kubernetes and the local backend start a job: a folder that is not one ends it at once
        "runpy.run_module('jupyter_gpu_env.runner', run_name='__main__', alter_sys=True)",
        "runpy.run_module('jupyter_gpu_env.backends.slurm.tick', run_name='__main__', alter_sys=True)",
        "runpy.run_module('jupyter_gpu_env.backends.kubernetes.schedules.tick', run_name='__main__', alter_sys=True)",
        "runpy.run_module('jupyter_gpu_env.schedules.tick', run_name='__main__', alter_sys=True)",
        # `jupyter gpu-env` as installed: its console script's entry point
        "sys.exit(next(iter(entry_points(group='console_scripts', name='jupyter-gpu-env'))).load()())",
    ],
)
def test_each_entry_point_starts_lean(start, tmp_path):
    """Each command the package starts calls lean_start before its own work: run as it is run, with an
    argument that stops it at once, it reports whether the import was made to fail."""
    code = (
        REPORT
        + "import runpy\nfrom importlib.metadata import entry_points\n"
        + f"sys.argv = ['cmd', {str(tmp_path / 'not-a-folder')!r}]\n"
        + start
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.stderr.strip().splitlines()[-1] == "LEAN", done.stderr[-2000:]
