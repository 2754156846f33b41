"""Server configuration for the Galata UI tests (started by Playwright's webServer).

Before the server starts, the project's demo builder makes (or reuses) an offline conda channel and a
real managed environment, ``demo-python``, in a cache folder: about 8 s the first time, nothing later.
Everything a test run writes (the user's environments, images, task records, kernelspecs and conda's
``environments.txt``) goes to fresh temporary folders, so every run starts clean and leaves the user's
own Jupyter and conda state alone.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jupyterlab.galata import configure_jupyter_server

configure_jupyter_server(c)  # noqa: F821

c.ServerApp.allow_root = True  # noqa: F821
c.ServerApp.ip = "127.0.0.1"  # noqa: F821
# Not 8888, so a JupyterLab already running for development does not collide.
c.ServerApp.port = int(os.environ.get("UI_TEST_PORT", "27888"))  # noqa: F821

# -- a real managed environment, built offline once and reused -----------------------------------
_cache_root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
DEMO = Path(os.environ.get("UI_TEST_DEMO_DIR", Path(_cache_root) / "jupyter-gpu-env" / "ui-tests-demo"))
CHANNEL, ENVS, PKGS = DEMO / "channel", DEMO / "envs", DEMO / "pkgs"
subprocess.run(  # noqa: S603 - argv list: this interpreter and the project's own module
    [
        sys.executable,
        "-m",
        "jupyter_gpu_env.demo",
        "build",
        "--channel",
        str(CHANNEL),
        "--env",
        str(ENVS / "demo-python"),
        "--pkgs",
        str(PKGS),
        "--quiet",
    ],
    check=True,
)

# -- a clean slate per server run ---------------------------------------------------------------------
# Beside the package cache (same filesystem), so that clones hard-link as they do for users. Runs
# older than a day are removed here, so they do not pile up.
(DEMO / "runs").mkdir(parents=True, exist_ok=True)
for _old in (DEMO / "runs").glob("run-*"):
    if _old.stat().st_mtime < time.time() - 24 * 3600:
        shutil.rmtree(_old, ignore_errors=True)
RUN = Path(tempfile.mkdtemp(prefix="run-", dir=DEMO / "runs"))
# Kernelspecs go to the Jupyter data folder and clones are recorded in ~/.conda/environments.txt:
# both are redirected here (the server reads them at each request, after this file has run).
os.environ["JUPYTER_DATA_DIR"] = str(RUN / "jupyter-data")
os.environ["HOME"] = str(RUN / "home")
(RUN / "home").mkdir()

c.GpuEnvApp.managed_env_dirs = [str(ENVS)]  # noqa: F821
c.GpuEnvApp.conda_channels = [str(CHANNEL)]  # noqa: F821
c.GpuEnvApp.pkgs_dir = str(PKGS)  # noqa: F821
# PyPI lookups and installs stay on this machine: no UI test waits on the network.
c.GpuEnvApp.pip_no_index = True  # noqa: F821
c.GpuEnvApp.user_env_dir = str(RUN / "envs")  # noqa: F821
c.GpuEnvApp.image_dir = str(RUN / "images")  # noqa: F821
c.GpuEnvApp.state_dir = str(RUN / "state")  # noqa: F821
# Where this run's state is, for seed_runs.py (a test's job history goes into the real job store).
(DEMO / "runs" / f"port-{c.ServerApp.port}.state").write_text(str(RUN / "state"))  # noqa: F821
# The local backend hands out one whole GPU and two 1g.10gb MIG slices (no GPU is touched: a job that
# asks for one is only given its name), so it offers MIG profiles and opportunistic jobs as on a GPU
# machine. Jobs that ask for no GPU, as every other test's do, run as before.
c.LocalBackend.gpus = ["GPU-0b1c:whole", "MIG-11aa:1g.10gb", "MIG-22bb:1g.10gb"]  # noqa: F821
# A team's shared folder, made as administrators are told to (group-writable, setgid, sticky), so the
# user can publish into it and unpublish what they published.
(RUN / "team").mkdir()
os.chmod(RUN / "team", 0o3775)
c.GpuEnvApp.shared_env_dirs = [str(RUN / "team")]  # noqa: F821
# A Dask cluster a failed UI test left behind shuts itself down soon (clusters outlive the server).
c.DaskClusters.idle_timeout = 60  # noqa: F821

# -- the Lab's terminals: this installation's venv first, as scripts/lab.sh sets it ----------------------
# lab.sh writes the same setting into the venv's jupyter_server_config.json (tests/demo/test_settings.py
# proves the server applies that file); here the server takes it from this file, which it also reads whole.
from jupyter_gpu_env.demo.settings import terminal_settings  # noqa: E402

_terminal = terminal_settings(Path(sys.executable).parent)["ServerApp"]["terminado_settings"]
c.ServerApp.terminado_settings = _terminal  # noqa: F821
