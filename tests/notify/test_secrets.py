"""The site's secrets stay with the server: started with the SMTP password in its environment, as the
admin guides say to give it, the server logs in with it, and nothing it starts inherits it — a kernel, a
batch job's runner and the kernel that runs its notebook."""

from __future__ import annotations

import json
import os

import pytest
from helpers import body, run_code, wait_job, write_notebook

from .receivers import PASSWORD, USER, Inbox

SECRET = "GPU_ENV_SMTP_PASSWORD"


@pytest.fixture
def jp_server_config(jp_server_config, smtp_settings, monkeypatch):
    monkeypatch.setenv(SECRET, PASSWORD)  # in the server's environment; its configuration names none
    return {
        **jp_server_config,
        "GpuEnvApp": {
            **jp_server_config["GpuEnvApp"],
            **smtp_settings,
        },
    }


async def test_the_smtp_password_reaches_no_child_of_the_server(
    api, jp_fetch, jp_serverapp, jp_root_dir, smtp_server, tmp_path
):
    inbox: Inbox = await smtp_server.start()
    assert os.environ.get(SECRET) is None  # the server took it into its configuration

    shown = "import os; print(os.environ.get('GPU_ENV_SMTP_PASSWORD'), 'PATH' in os.environ)"
    assert await run_code(jp_fetch, jp_serverapp, "python3", shown) == "None True\n"

    seen = tmp_path / "seen.json"
    cells = ["import json, os", f"open({str(seen)!r}, 'w').write(json.dumps({{**os.environ}}))"]
    path = write_notebook(jp_root_dir, "environment.ipynb", cells)
    job = await body(await api("jobs", method="POST", body=json.dumps({"notebook_path": path})))
    assert (await wait_job(api, job["id"]))["state"] == "succeeded"
    environment = json.loads(seen.read_text())
    assert SECRET not in environment and PASSWORD not in environment.values() and "PATH" in environment

    # The server still has it: it logs in with it.
    choice = {"email": "alice@example.org"}
    await api("notifications", method="PUT", body=json.dumps(choice))
    tried = await body(await api("notifications", "test", method="POST", body=b"{}"))
    assert tried["message"] == "1 of 1 test messages delivered." and inbox.logins == [USER]
