"""Server configuration for the MIG UI tests (``playwright-mig.config.js``).

The GPU sampler replays a real ``nvidia-smi`` capture of an H100 with MIG enabled (nvidia_gpu_exporter's
``nvgpuexp-capture-h100-mig-590.48.01.txt`` in ``../shared/fixtures/gpu/``, beside the repository; never
copied into it): four GPU instances, 3g.40gb, 2g.20gb and two 1g.10gb. ``CUDA_VISIBLE_DEVICES`` names
the first 1g.10gb slice (GPU instance 9) by the MIG UUID the capture's ``nvidia-smi -L`` prints, so the
panel shows that slice as this server's, as it would in a container given one MIG device.

Without the fixtures folder the server starts without a GPU source and the MIG spec skips, saying why.
"""

import os
import tempfile
from pathlib import Path

from jupyterlab.galata import configure_jupyter_server

configure_jupyter_server(c)  # noqa: F821

c.ServerApp.allow_root = True  # noqa: F821
c.ServerApp.ip = "127.0.0.1"  # noqa: F821
# Keep in step with playwright-mig.config.js; not the main suite's 27888, so both can run at once.
c.ServerApp.port = int(os.environ.get("UI_MIG_PORT", "27890"))  # noqa: F821

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "gpu"
CAPTURE = FIXTURES / "nvgpuexp-capture-h100-mig-590.48.01.txt"
# `nvidia-smi -L` in the capture: "MIG 1g.10gb Device 2: (UUID: MIG-00000002-...)", GPU instance 9.
HELD_MIG_UUID = "MIG-00000002-0000-0000-0000-000000000002"

if CAPTURE.is_file():
    c.GpuEnvApp.gpu_recorded_source = str(CAPTURE)  # noqa: F821
    # Read by the recorded source (as CUDA reads it) when it marks what this server can see.
    os.environ["CUDA_VISIBLE_DEVICES"] = HELD_MIG_UUID
    os.environ.pop("NVIDIA_VISIBLE_DEVICES", None)

# Whatever the server writes goes to a throwaway folder, never the user's own state.
RUN = Path(tempfile.mkdtemp(prefix="gpu-env-ui-mig-"))
os.environ["JUPYTER_DATA_DIR"] = str(RUN / "jupyter-data")
c.GpuEnvApp.user_env_dir = str(RUN / "envs")  # noqa: F821
c.GpuEnvApp.image_dir = str(RUN / "images")  # noqa: F821
c.GpuEnvApp.state_dir = str(RUN / "state")  # noqa: F821
