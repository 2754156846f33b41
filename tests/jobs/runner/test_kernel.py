"""How the runner's kernel listens: a real runner and python3 kernel."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers import printed, write_notebook

from jupyter_gpu_env.contracts import jobfiles

CELLS = [
    "import json, os, stat\n"
    "from ipykernel.kernelapp import IPKernelApp\n"
    "app = IPKernelApp.instance()\n"
    "folder = os.path.dirname(app.ip)\n"
    "print(json.dumps({'transport': app.transport, 'folder': folder,\n"
    "                  'mode': stat.S_IMODE(os.stat(folder).st_mode), 'owner': os.stat(folder).st_uid}))",
]


def test_an_ipython_kernel_listens_on_sockets_in_a_folder_of_its_own_and_no_tcp_port(tmp_path: Path) -> None:
    """Five TCP ports picked free and released before the kernel binds them can be taken in between by
    any process on the machine (the kernel then dies before it answers); Unix sockets in a private folder
    have no such window and nobody else can connect to them. The folder goes when the job ends."""
    folder = tmp_path / "job"
    folder.mkdir()
    write_notebook(folder, jobfiles.INPUT, CELLS)
    spec = {
        "format": jobfiles.JOB_FORMAT,
        "id": "abc",
        "name": "where",
        "kernel": "python3",
        "parameters": {},
        "cwd": str(folder),
        "gpu_sample_interval": 0,
    }
    (folder / jobfiles.JOB_JSON).write_text(json.dumps(spec))

    done = subprocess.run(
        [sys.executable, "-m", "jupyter_gpu_env.runner", str(folder)], cwd=folder, timeout=120
    )

    assert done.returncode == 0, (folder / jobfiles.LOG).read_text()
    seen = json.loads(printed(folder / jobfiles.OUTPUT).strip())
    assert seen["transport"] == "ipc"
    assert seen["mode"] == 0o700 and seen["owner"] == Path(tmp_path).stat().st_uid
    assert not Path(seen["folder"]).exists()
