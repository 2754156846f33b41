"""The notifier's ``c.GpuEnvApp.*`` options: the site's SMTP server and the public URL links point to.
Declared here, beside what uses them; ``GpuEnvOptions`` is made of them, so they are set and documented as
every other option of ``GpuEnvApp``.
"""

from __future__ import annotations

import os
import socket

from traitlets import Bool, Int, Unicode, default
from traitlets.config import Configurable


class NotificationOptions(Configurable):
    """Word when something ends: e-mail through the site's SMTP server, links to this server."""

    smtp_host = Unicode(
        "",
        config=True,
        help="The site's SMTP server for e-mail when a job, sweep or scheduled run ends; "
        "empty: no e-mail (webhooks and the Lab's own notices still work).",
    )
    smtp_port = Int(
        587, config=True, help="The SMTP server's port (587: submission with STARTTLS; 25: relay)."
    )
    smtp_starttls = Bool(True, config=True, help="Upgrade the SMTP connection with STARTTLS (verified).")
    smtp_sender = Unicode(
        config=True, help="The From address of notification e-mails. Default: jupyter-gpu-env@<host name>."
    )
    smtp_username = Unicode("", config=True, help="Log in to the SMTP server as this user; empty: no login.")
    smtp_password = Unicode(
        config=True,
        help="The SMTP user's password. Default: the environment variable GPU_ENV_SMTP_PASSWORD, "
        "which keeps it out of configuration files; the server reads it as it starts and removes it from its "
        "environment, so that no kernel, terminal, batch job or Dask cluster it starts inherits it.",
    )
    public_url = Unicode(
        "",
        config=True,
        help="The server's URL as users reach it, for the links in notifications (e.g. "
        "https://hub.example.org/user/alice/). Empty: JupyterHub's public URL and this server's prefix "
        "(JUPYTERHUB_PUBLIC_URL, JUPYTERHUB_SERVICE_PREFIX) where set, else the server's own URL.",
    )

    @default("smtp_sender")
    def _default_smtp_sender(self) -> str:
        return f"jupyter-gpu-env@{socket.gethostname()}"

    @default("smtp_password")
    def _default_smtp_password(self) -> str:
        return os.environ.get("GPU_ENV_SMTP_PASSWORD", "")
