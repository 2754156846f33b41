"""`GET`/`PUT notifications`, `POST notifications/test`, and a job's own `notify` through the REST API, on a
real server whose SMTP server is a real one on loopback."""

from __future__ import annotations

import json

import pytest
from helpers import body, error, write_notebook

from .receivers import PASSWORD, Hooks, Inbox


@pytest.fixture
def jp_server_config(jp_server_config, smtp_settings):
    return {
        **jp_server_config,
        "GpuEnvApp": {
            **jp_server_config["GpuEnvApp"],
            **smtp_settings,
            "smtp_password": PASSWORD,
            "public_url": "https://hub.example.org/user/alice",
        },
    }


async def test_choices_are_kept_checked_and_tested(api, smtp_server, webhook_server, tmp_path):
    inbox: Inbox = await smtp_server.start()
    hooks: Hooks = await webhook_server.start()
    first = await body(await api("notifications"))
    assert first == {"email": None, "webhook_url": None, "on": "failed", "email_available": True}
    nothing = await body(await api("notifications", "test", method="POST", body=b"{}"))
    assert nothing["deliveries"] == [] and "Nothing was sent" in nothing["message"]

    for bad, field, words in (
        ({"email": "not an address"}, "email", "name@example.org"),
        ({"email": "a@b"}, "email", "not valid"),
        ({"webhook_url": "ftp://example.org/hook"}, "webhook_url", "http:// or https://"),
        ({"webhook_url": "example.org/hook"}, "webhook_url", "http:// or https://"),
        ({"on": "sometimes"}, "on", ""),
        ({"sms": "+1 555"}, "sms", ""),
    ):
        err = await error(api("notifications", method="PUT", body=json.dumps(bad)), 400)
        assert err["reason"] == "invalid_request" and field in json.dumps(err["details"])
        assert words in json.dumps(err), err
    assert await body(await api("notifications")) == first  # nothing refused was kept

    choice = {"email": "alice@example.org", "webhook_url": hooks.url(), "on": "all"}
    put = await body(await api("notifications", method="PUT", body=json.dumps(choice)))
    assert put == {**choice, "email_available": True}
    assert await body(await api("notifications")) == put
    assert json.loads((tmp_path / "state" / "notifications.json").read_text()) == choice

    tried = await body(await api("notifications", "test", method="POST", body=b"{}"))
    assert tried["message"] == "2 of 2 test messages delivered."
    assert [(d["channel"], d["delivered"]) for d in tried["deliveries"]] == [
        ("email", True),
        ("webhook", True),
    ]
    assert tried["deliveries"][1]["destination"] == f"http://127.0.0.1:{hooks.port}/…"  # not its secret path
    (mail,) = inbox.messages
    assert mail["Subject"] == "Test notification from jupyter-gpu-env" and mail["To"] == "alice@example.org"
    assert "Server: https://hub.example.org/user/alice/" in mail.get_content()
    (posted,) = hooks.received
    assert posted["text"] == mail["Subject"]

    # A webhook that refuses: the test says what it answered.
    hooks.answers = [404]
    tried = await body(await api("notifications", "test", method="POST", body=b"{}"))
    assert tried["deliveries"][1] == {
        "channel": "webhook",
        "destination": f"http://127.0.0.1:{hooks.port}/…",
        "delivered": False,
        "message": f"The webhook http://127.0.0.1:{hooks.port}/… answered 404: try later.",
    }

    cleared = await body(await api("notifications", method="PUT", body=b"{}"))
    assert cleared == first


async def test_a_job_and_a_sweep_carry_their_own_notify(api, jp_root_dir):
    path = write_notebook(jp_root_dir, "quick.ipynb", ["print(alpha)"], parameters="alpha = 1")
    own = {"on": "all", "webhook_url": "https://chat.example.org/hooks/abc"}
    job = await body(
        await api("jobs", method="POST", body=json.dumps({"notebook_path": path, "notify": own}))
    )
    assert job["notify"] == {**own, "email": None}
    assert (await body(await api("jobs", job["id"])))["notify"] == job["notify"]

    sweep = {"notebook_path": path, "sweep": {"alpha": [1, 2]}, "notify": {"on": "never"}}
    group = await body(await api("jobs", method="POST", body=json.dumps(sweep)))
    runs = await body(await api("jobs", params={"group": group["id"]}))
    assert [r["notify"]["on"] for r in runs["items"]] == ["never", "never"]

    for bad in ({"on": "sometimes"}, {"email": "nobody"}, {"webhook_url": "file:///etc/passwd"}):
        err = await error(
            api("jobs", method="POST", body=json.dumps({"notebook_path": path, "notify": bad})), 400
        )
        assert "notify" in json.dumps(err["details"])

    # Nothing left running after the test.
    await api("jobs", job["id"], method="DELETE")
    await api("jobs", "groups", group["id"], "cancel", method="POST", body=b"{}")
