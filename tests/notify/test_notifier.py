"""Word when jobs end, end to end on the local backend: real jobs, a real SMTP server and a real HTTP
receiver on loopback."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from helpers import wait_until

from jupyter_gpu_env.jobs.service import JobService
from jupyter_gpu_env.models.automation.notifications import NotificationSettings
from jupyter_gpu_env.models.jobs import Job
from jupyter_gpu_env.notify.email import SmtpSettings
from jupyter_gpu_env.notify.notifier import Notifier
from jupyter_gpu_env.notify.settings import SettingsFile

from .receivers import PASSWORD, USER, Hooks, Inbox

BASE = "https://hub.example.org/user/alice/"


class Watched:
    """A service whose tracker tells a notifier, and the ids of the jobs it was told of."""

    def __init__(self, svc: JobService, notifier: Notifier) -> None:
        self.svc, self.notifier = svc, notifier
        self.told: list[str] = []

        def ended(job: Job) -> None:
            self.told.append(job.id)
            notifier.ended(job)

        svc.tracker.on_ended = ended

    async def ended(self, job_id: str) -> Job:
        """Wait until the job has ended, the notifier was told, and it has nothing left to do."""
        job = await wait_until(lambda: self._ended(job_id), within=60, what=f"job {job_id} ending")
        await wait_until(lambda: job_id in self.told, what=f"the end of {job_id} told")
        await wait_until(lambda: self.notifier.pending() == 0, what="the notifications sent")
        return job

    async def _ended(self, job_id: str) -> Job | None:
        await self.svc.refresh()
        job = await self.svc.get(job_id)
        return job if job.state in ("succeeded", "failed", "cancelled") else None


def notifier(tmp_path: Path, svc: JobService, smtp: SmtpSettings, **kwargs: Any) -> Notifier:
    return Notifier(
        SettingsFile(tmp_path / "state" / "notifications.json"),
        smtp,
        lambda: BASE,
        svc.store.sweeps.get,
        backoff=0.05,
        **kwargs,
    )


def smtp_of(inbox: Inbox, **kwargs: Any) -> SmtpSettings:
    return SmtpSettings(
        "127.0.0.1",
        inbox.port,
        starttls=False,
        sender="gpu@example.org",
        username=USER,
        password=PASSWORD,
        **kwargs,
    )


async def test_a_failed_job_is_mailed_and_posted_with_its_facts(batch, tmp_path, smtp_server, webhook_server):
    inbox: Inbox = await smtp_server.start()
    hooks: Hooks = await webhook_server.start()
    bad = batch.notebook("work/train.ipynb", ["x = 1", "x / 0"])
    svc = batch.service()
    note = notifier(tmp_path, svc, smtp_of(inbox))
    await note.put(NotificationSettings(email="alice@example.org", webhook_url=hooks.url()))
    watched = Watched(svc, note)
    try:
        job = await svc.submit({"notebook_path": bad, "name": "train"})
        job = await watched.ended(job.id)
        assert job.state == "failed"

        (mail,) = inbox.messages
        assert inbox.recipients == [["alice@example.org"]] and inbox.logins == [USER]
        assert mail["From"] == "gpu@example.org" and mail["To"] == "alice@example.org"
        assert mail["Subject"].startswith('Job "train" failed after ')
        text = mail.get_content()
        assert "ZeroDivisionError" in text
        assert "State: failed" in text and "Duration: " in text and "GPU use: " in text
        assert f"Output notebook: {BASE}lab/tree/{job.output_path}" in text

        (posted,) = hooks.received
        assert hooks.content_types == ["application/json"]
        assert posted["text"] == mail["Subject"]
        (card,) = posted["attachments"]
        assert card["color"] == "#d50200" and card["title"] == "train"
        assert card["title_link"] == f"{BASE}lab/tree/{job.output_path}"
        fields = {f["title"]: f["value"] for f in card["fields"]}
        assert fields["State"] == "failed" and fields["Duration"].endswith(" s")
        assert fields["GPU use"] and fields["Output notebook"] == card["title_link"]
        props = posted["props"]["jupyter-gpu-env"]
        assert props["id"] == job.id and props["state"] == "failed" and props["duration_seconds"] >= 0
    finally:
        await note.stop()
        await svc.stop()


async def test_who_is_told_what(batch, tmp_path, webhook_server):
    """Failures only by default; a job's own `notify` over the user's choice; every end with `all`; a
    scheduled run names its schedule."""
    hooks: Hooks = await webhook_server.start()
    good = batch.notebook("ok.ipynb", ["print('fine')"])
    bad = batch.notebook("bad.ipynb", ["1 / 0"])
    svc = batch.service(max_concurrent=3)

    async def schedule_name(schedule_id: str) -> str | None:
        return {"s-1": "nightly"}.get(schedule_id)

    note = notifier(tmp_path, svc, SmtpSettings(""), schedule_name=schedule_name)
    await note.put(NotificationSettings(webhook_url=hooks.url(), on="failed"))
    watched = Watched(svc, note)
    try:
        quiet = await svc.submit({"notebook_path": good, "name": "quiet"})
        loud = await svc.submit({"notebook_path": good, "name": "loud", "notify": {"on": "all"}})
        never = await svc.submit({"notebook_path": bad, "name": "never", "notify": {"on": "never"}})
        assert loud.notify is not None and loud.notify.on == "all"
        quiet = await watched.ended(quiet.id)
        await watched.ended(loud.id)
        await watched.ended(never.id)
        assert [p["attachments"][0]["title"] for p in hooks.received] == ["loud"]
        assert hooks.received[0]["text"].startswith('Job "loud" succeeded after ')
        assert hooks.received[0]["attachments"][0]["color"] == "#2eb886"

        # Every end, once the user says so; a scheduled run says which schedule it is of.
        await note.put(NotificationSettings(webhook_url=hooks.url(), on="all"))
        note.ended(quiet.model_copy(update={"id": "again", "schedule_id": "s-1"}))
        await wait_until(lambda: len(hooks.received) == 2, what="the scheduled run's word")
        assert hooks.received[1]["text"].startswith('Scheduled run "quiet" of schedule "nightly" succeeded')
        assert {"title": "Schedule", "value": "nightly", "short": True} in hooks.received[1]["attachments"][
            0
        ]["fields"]
    finally:
        await note.stop()
        await svc.stop()


async def test_a_failed_delivery_is_retried_and_never_changes_the_job(
    batch, tmp_path, webhook_server, caplog
):
    """The webhook answers 500 twice, then 200: the third try delivers. The SMTP server cannot be reached:
    logged after its tries. The job's record is as the tracker left it."""
    hooks: Hooks = await webhook_server.start()
    hooks.answers = [500, 500]
    bad = batch.notebook("bad.ipynb", ["1 / 0"])
    svc = batch.service()
    closed = SmtpSettings(
        "127.0.0.1", 9, starttls=False, sender="gpu@example.org", timeout=2.0
    )  # discard port
    note = notifier(tmp_path, svc, closed, attempts=3)
    await note.put(NotificationSettings(email="alice@example.org", webhook_url=hooks.url()))
    watched = Watched(svc, note)
    try:
        caplog.set_level(logging.INFO, logger="jupyter_gpu_env.notify")
        job = await svc.submit({"notebook_path": bad, "name": "flaky"})
        job = await watched.ended(job.id)
        assert len(hooks.received) == 3 and hooks.received[0] == hooks.received[2]
        assert (await svc.store.get(job.id)) == job
        gave_up = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert len(gave_up) == 1
        assert "email of job" in gave_up[0] and "after 3 tries" in gave_up[0] and "127.0.0.1:9" in gave_up[0]
        assert any(
            "webhook of job" in r.getMessage() and "delivered" in r.getMessage() for r in caplog.records
        )
        # The webhook's path (its secret) is not in the log.
        assert not any(
            "XXXX" in r.getMessage() for r in caplog.records if r.name.startswith("jupyter_gpu_env")
        )
    finally:
        await note.stop()
        await svc.stop()


async def test_a_sweep_is_told_once_when_all_its_runs_have_ended(batch, tmp_path, webhook_server):
    hooks: Hooks = await webhook_server.start()
    path = batch.notebook("sweep.ipynb", ["assert alpha < 2, 'too big'"], parameters="alpha = 1")
    svc = batch.service(max_concurrent=2)
    note = notifier(tmp_path, svc, SmtpSettings(""))
    watched = Watched(svc, note)
    try:
        sweep = await svc.submit(
            {
                "notebook_path": path,
                "name": "grid",
                "sweep": {"alpha": [1, 2]},
                "notify": {"webhook_url": hooks.url()},
            }
        )
        runs = (await svc.list(sweep=sweep.id)).items
        assert [r.notify and r.notify.webhook_url for r in runs] == [hooks.url()] * 2
        for run in runs:
            await watched.ended(run.id)
        (posted,) = hooks.received
        assert (
            posted["text"].startswith('Sweep "grid" failed after ')
            and "2 runs: 1 succeeded, 1 failed" in posted["text"]
        )
        fields = {f["title"]: f["value"] for f in posted["attachments"][0]["fields"]}
        assert fields["Results (CSV)"] == f"{BASE}gpu-env/api/sweeps/{sweep.id}/results?format=csv"
    finally:
        await note.stop()
        await svc.stop()


async def test_a_pipeline_is_told_once_when_its_last_node_has_ended_or_been_skipped(
    batch, tmp_path, webhook_server
):
    """prepare fails: its children are skipped, never run; the one message, sent when the last skip is
    recorded, names each node's end and links to the failed node's folder."""
    from pipeline_notebooks import diamond

    from jupyter_gpu_env.pipelines.service import PipelineService

    hooks: Hooks = await webhook_server.start()
    svc = batch.service(max_concurrent=3)
    pipes = PipelineService(svc)
    note = notifier(tmp_path, svc, SmtpSettings(""), pipeline_of=pipes.get)
    Watched(svc, note)
    try:
        request = diamond(batch.root, fail_prepare=True)
        request["notify"] = {"webhook_url": hooks.url()}
        made = await pipes.submit(request)

        async def told():
            await svc.refresh()
            await pipes.advance()
            return hooks.received if note.pending() == 0 and hooks.received else None

        (posted,) = await wait_until(told, within=60, what="the pipeline's one message")
        assert posted["text"].startswith('Pipeline "diamond" failed after ')
        assert posted["text"].endswith("1 failed, 3 skipped")
        props = posted["props"]["jupyter-gpu-env"]
        assert props == {
            "kind": "pipeline", "id": made.id, "name": "diamond", "state": "failed",
            "counts": {"failed": 1, "skipped": 3},
        }  # fmt: skip
        assert "prepare was told to fail" in posted["attachments"][0]["text"]
        await pipes.advance()  # nothing more to say
        assert len(hooks.received) == 1
    finally:
        await note.stop()
        await svc.stop()
