"""Process start: CPU a job's runner and a command spend importing, started lean or as plain Python would.

Each case runs in a fresh interpreter, 5 times, and reports the median of the process's own user+system
CPU seconds (``resource.getrusage``; a cold first run warms the file cache and is not counted):

- *runner*: what ``python -m jupyter_gpu_env.runner`` imports before it starts a kernel (the runner
  module, papermill and nbformat);
- *command*: ``jupyter gpu-env job list`` on an empty job store, which builds the server's services
  (jupyter_server and its event schemas);
- *server*: importing ``jupyter_server.serverapp``, for scale: a Jupyter server, which we leave as it is.

The baseline is the same code started without :func:`jupyter_gpu_env.system.startup.lean_start`, so the
ratio is what the lean start saves each time a job or a command starts.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator

RUNS = 5

USAGE = (
    "import json, resource, sys\n"
    "u = resource.getrusage(resource.RUSAGE_SELF)\n"
    "print(json.dumps(u.ru_utime + u.ru_stime), file=sys.stderr)\n"
)

CASES = {
    "runner": "import jupyter_gpu_env.jobs.runner.runner, papermill, nbformat\n",
    "command": (
        "import sys\nfrom jupyter_gpu_env.cli import main\n"
        "sys.argv = ['jupyter-gpu-env', 'job', 'list']\nmain()\n"
    ),
    "server": "import jupyter_server.serverapp\n",
}

LEAN = "from jupyter_gpu_env.system.startup import lean_start\nlean_start()\n"


def _cpu(code: str, env: dict[str, str]) -> float:
    done = subprocess.run(
        [sys.executable, "-c", code + USAGE], capture_output=True, text=True, env=env, check=True
    )
    return float(done.stderr.strip().splitlines()[-1])


def _median(code: str, env: dict[str, str]) -> float:
    _cpu(code, env)  # warm the file cache
    return statistics.median(_cpu(code, env) for _ in range(RUNS))


def main() -> Iterator[str]:
    with tempfile.TemporaryDirectory() as home:
        # an empty configuration and store: the command lists nothing, quickly
        env = {
            **os.environ,
            "HOME": home,
            "JUPYTER_CONFIG_DIR": home,
            "JUPYTER_CONFIG_PATH": home,
            "JUPYTER_DATA_DIR": os.path.join(home, "data"),
            "JUPYTER_RUNTIME_DIR": os.path.join(home, "runtime"),
        }
        os.makedirs(os.path.join(home, "root"))
        with open(os.path.join(home, "jupyter_server_config.json"), "w") as f:
            json.dump({"ServerApp": {"root_dir": os.path.join(home, "root")}}, f)
        yield "| case | lean CPU s | plain CPU s | plain/lean |"
        yield "| --- | ---: | ---: | ---: |"
        for name, code in CASES.items():
            lean = _median(LEAN + code, env)
            plain = _median(code, env)
            yield f"| {name} | {lean:.2f} | {plain:.2f} | {plain / lean:.2f}x |"
