"""How the package's own processes start: without an import that costs seconds and serves nothing
they do.

jsonschema, which nbformat, papermill and jupyter_server import, imports ``rfc3987_syntax`` wherever it
is installed (jupyter_events' ``jsonschema[format-nongpl]`` installs it), and that module builds about
35 Lark parsers as it is imported: 2 to 3 s of CPU in every job's runner and every command, for the
``iri`` and ``iri-reference`` formats, which no schema these processes check uses
(python-jsonschema/jsonschema#1428, still so in jsonschema 4.26). jsonschema registers those two
checkers only if the import succeeds, so a process that goes without loses only them.

Only the package's own processes go without it, at their entry point (a job's runner, the command
line, a schedule's tick); a Jupyter server or a kernel that imports the package keeps its own.
"""

from __future__ import annotations

import sys

SKIPPED = ("rfc3987_syntax",)


def lean_start() -> None:
    """Make the modules in :data:`SKIPPED` unimportable in this process (``import`` raises
    ``ImportError``, which jsonschema expects of an optional checker). Call it first in an entry
    point, before anything imports jsonschema; a module already imported is left as it is."""
    for name in SKIPPED:
        # None in sys.modules is Python's documented way to make an import fail.
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]
