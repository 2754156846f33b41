"""Server configuration for the Galata UI tests (started by Playwright's webServer)."""

import os

from jupyterlab.galata import configure_jupyter_server

configure_jupyter_server(c)  # noqa: F821

c.ServerApp.allow_root = True  # noqa: F821
c.ServerApp.ip = "127.0.0.1"  # noqa: F821
# Not 8888, so a JupyterLab already running for development does not collide.
c.ServerApp.port = int(os.environ.get("UI_TEST_PORT", "27888"))  # noqa: F821
