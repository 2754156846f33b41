"""The pure builders of what is sent when something ends: an e-mail's subject and plain-text body, and
a webhook's JSON, Slack- and Mattermost-compatible (a top-level ``text`` and one ``attachments`` entry
with a colour by state, fields and a link), from a job's record or a sweep's summary.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from ..models.automation.pipelines import Pipeline
from ..models.jobs import Job, JobGpuUsage
from ..models.sweeps import JobGroup

# Slack's and Mattermost's colours for good, bad and neutral.
COLOURS = {"succeeded": "#2eb886", "failed": "#d50200", "cancelled": "#9e9e9e"}
PRODUCT = "jupyter-gpu-env"
MAX_REASON = 1000  # characters of a job's message quoted in a notification


@dataclass(frozen=True)
class Message:
    """One notification: ``subject`` and ``text`` for e-mail, ``payload`` for a webhook."""

    subject: str
    text: str
    payload: dict[str, Any]


def job_message(job: Job, base_url: str, schedule: str | None = None) -> Message:
    """What is sent when ``job`` has ended; ``schedule`` names the schedule that started it, if one did.
    ``base_url`` is the server's public URL (ending in ``/``); empty, the message holds no link."""
    duration = _seconds(job.started_at, job.finished_at)
    took = f" after {duration_text(duration)}" if duration is not None else ""
    what = f'Scheduled run "{job.name}" of schedule "{schedule}"' if schedule else f'Job "{job.name}"'
    if job.schedule_id and not schedule:
        what = f'Scheduled run "{job.name}"'
    state: str = job.state
    if job.kind == "kernel":  # a batch kernel's session: it ends, shut down or stopped; it has no output
        what, state = f'Interactive session "{job.name}"', "ended" if job.state == "succeeded" else job.state
    subject = f"{what} {state}{took}"
    link = lab_link(base_url, job.output_path) if job.output_path else None
    reason = _cut(job.message)
    gpu = gpu_text(job.gpu)
    facts: list[tuple[str, str, bool]] = [
        ("State", job.state, True),
        ("Duration", duration_text(duration) if duration is not None else "did not start", True),
    ]
    if schedule or job.schedule_id:
        facts.append(("Schedule", schedule or job.schedule_id or "", True))
    facts += [("Backend", job.backend, True), ("GPU use", gpu, False)]
    if job.parameters:
        facts.append(("Parameters", _parameters(job), False))
    lines = [f"{subject}.", ""]
    if reason:
        lines += [reason, ""]
    lines += [f"{title}: {value}" for title, value, _ in facts]
    if job.notebook_path:
        lines.append(f"Notebook: {job.notebook_path}")
    if job.kind != "kernel":
        lines.append(f"Output notebook: {link or job.output_path}")
    if job.started_at is not None:
        lines.append(f"Started: {when(job.started_at)}")
    if job.finished_at is not None:
        lines.append(f"Ended: {when(job.finished_at)}")
    lines += ["", f"Job id: {job.id}", _footer()]
    attachment = _attachment(job.state, job.name, link, reason, facts)
    if link:
        attachment["fields"].append(_field("Output notebook", f"{link}", short=False))
    payload = {"text": subject, "attachments": [attachment], "props": {PRODUCT: _job_props(job, schedule)}}
    return Message(subject, "\n".join(lines) + "\n", payload)


def sweep_message(sweep: JobGroup, base_url: str) -> Message:
    """What is sent once every run of ``sweep`` has ended: how many succeeded and failed, and where its
    results are."""
    duration = _seconds(sweep.created_at, sweep.finished_at)
    took = f" after {duration_text(duration)}" if duration is not None else ""
    counts = runs_text(sweep)
    subject = f'Sweep "{sweep.name}" {sweep.state}{took}: {counts}'
    link = results_link(base_url, sweep.id)
    facts: list[tuple[str, str, bool]] = [
        ("State", sweep.state, True),
        ("Duration", duration_text(duration) if duration is not None else "-", True),
        ("Runs", counts, False),
        ("Backend", sweep.backend, True),
    ]
    if sweep.varied:
        facts.append(("Varied", ", ".join(sweep.varied), True))
    lines = [f"{subject}.", ""]
    lines += [f"{title}: {value}" for title, value, _ in facts]
    lines.append(f"Notebook: {sweep.notebook_path}")
    if link:
        lines.append(f"Results (CSV): {link}")
    lines += ["", f"Sweep id: {sweep.id}", _footer()]
    attachment = _attachment(sweep.state, sweep.name, link, "", facts)
    if link:
        attachment["fields"].append(_field("Results (CSV)", link, short=False))
    props = {
        "kind": "sweep",
        "id": sweep.id,
        "name": sweep.name,
        "state": sweep.state,
        "counts": sweep.counts,
    }
    payload = {"text": subject, "attachments": [attachment], "props": {PRODUCT: props}}
    return Message(subject, "\n".join(lines) + "\n", payload)


def pipeline_message(pipeline: Pipeline, base_url: str) -> Message:
    """What is sent once every node of ``pipeline`` has ended or been skipped: each node's end, and a
    link to the folder of the first that failed (else the last node's)."""
    duration = _seconds(pipeline.created_at, pipeline.finished_at)
    took = f" after {duration_text(duration)}" if duration is not None else ""
    counts = ", ".join(f"{n} {state}" for state, n in sorted(pipeline.counts.items()))
    subject = f'Pipeline "{pipeline.name}" {pipeline.state}{took}: {counts}'
    failed = [n for n in pipeline.nodes if n.state == "failed"]
    shown = failed[0] if failed else pipeline.nodes[-1]
    link = lab_link(base_url, shown.job_dir) if shown.job_dir else None
    facts: list[tuple[str, str, bool]] = [
        ("State", pipeline.state, True),
        ("Duration", duration_text(duration) if duration is not None else "-", True),
        ("Nodes", counts, False),
    ]
    lines = [f"{subject}.", ""]
    lines += [f"{title}: {value}" for title, value, _ in facts]
    lines += [""] + [
        f"  {n.id}: {n.state}" + (f" ({_cut(n.message)})" if n.state in ("failed", "skipped") else "")
        for n in pipeline.nodes
    ]
    if link:
        lines += ["", f"{'First failure' if failed else 'Last node'}: {link}"]
    lines += ["", f"Pipeline id: {pipeline.id}", _footer()]
    reason = f"{failed[0].id}: {_cut(failed[0].message)}" if failed else ""
    attachment = _attachment(pipeline.state, pipeline.name, link, reason, facts)
    props = {"kind": "pipeline", "id": pipeline.id, "name": pipeline.name, "state": pipeline.state}
    payload = {
        "text": subject,
        "attachments": [attachment],
        "props": {PRODUCT: props | {"counts": pipeline.counts}},
    }
    return Message(subject, "\n".join(lines) + "\n", payload)


def test_message(base_url: str) -> Message:
    """The message `POST notifications/test` sends."""
    subject = "Test notification from jupyter-gpu-env"
    text = (
        "This is a test. Notifications from your Jupyter server reach you here when your batch jobs, "
        "sweeps and scheduled runs end."
    )
    lines = [text, ""] + ([f"Server: {base_url}", ""] if base_url else []) + [_footer()]
    body = "\n".join(lines) + "\n"
    attachment: dict[str, Any] = {"fallback": subject, "color": "#439fe0", "title": subject, "text": text}
    if base_url:
        attachment["title_link"] = base_url
    payload = {"text": subject, "attachments": [attachment], "props": {PRODUCT: {"kind": "test"}}}
    return Message(subject, body, payload)


# ----- pieces -----------------------------------------------------------------------------------------


def public_base(configured: str, environ: Mapping[str, str], server_url: str) -> str:
    """The base of every link in a message, ending in ``/``: ``configured`` (c.GpuEnvApp.public_url),
    else JupyterHub's public URL with this server's prefix where the Hub set them, else the server's own
    URL (which, behind a proxy, users may not reach)."""
    url = configured
    hub = environ.get("JUPYTERHUB_PUBLIC_URL", "")
    if not url and hub:
        url = hub.rstrip("/") + "/" + environ.get("JUPYTERHUB_SERVICE_PREFIX", "").lstrip("/")
    url = url or server_url
    return url if not url or url.endswith("/") else url + "/"


def lab_link(base_url: str, path: str) -> str | None:
    """The Lab's link to a file under the server's root; None without a base or for a file outside it."""
    if not base_url or not path or path.startswith("/"):
        return None
    return f"{base_url}lab/tree/{quote(path)}"


def results_link(base_url: str, sweep_id: str) -> str | None:
    return f"{base_url}gpu-env/api/sweeps/{quote(sweep_id)}/results?format=csv" if base_url else None


def runs_text(sweep: JobGroup) -> str:
    """``10 runs: 8 succeeded, 2 failed``."""
    parts = [f"{sweep.counts[s]} {s}" for s in ("succeeded", "failed", "cancelled") if sweep.counts.get(s)]
    runs = "run" if sweep.size == 1 else "runs"
    return f"{sweep.size} {runs}: {', '.join(parts) or 'none ended'}"


def gpu_text(gpu: JobGpuUsage | None) -> str:
    """``peak memory 3.2 GiB of 40.0 GiB, mean utilization 57 %, 0.25 GPU-hours (0.14 used)``."""
    if gpu is None:
        return "not measured"
    if not gpu.available:
        return gpu.reason or "no GPU"
    parts = []
    if gpu.peak_memory_bytes is not None:
        total = f" of {size_text(gpu.memory_total_bytes)}" if gpu.memory_total_bytes else ""
        parts.append(f"peak memory {size_text(gpu.peak_memory_bytes)}{total}")
    if gpu.mean_utilization_percent is not None:
        parts.append(f"mean utilization {gpu.mean_utilization_percent:.0f} %")
    if gpu.gpu_hours_allocated is not None:
        used = f" ({gpu.gpu_hours_used:.2f} used)" if gpu.gpu_hours_used is not None else ""
        parts.append(f"{gpu.gpu_hours_allocated:.2f} GPU-hours{used}")
    return ", ".join(parts) or "not measured"


def size_text(n: int | None) -> str:
    size = float(n or 0)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"


def duration_text(seconds: float) -> str:
    """``12 s``, ``3 min 05 s``, ``2 h 07 min``, ``3 d 04 h``."""
    s = max(int(round(seconds)), 0)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    if s < 86400:
        return f"{s // 3600} h {s % 3600 // 60:02d} min"
    return f"{s // 86400} d {s % 86400 // 3600:02d} h"


def when(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(t))


def _seconds(start: float | None, end: float | None) -> float | None:
    return None if start is None or end is None else max(end - start, 0.0)


def _cut(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 1] + "…"


def _parameters(job: Job) -> str:
    shown = ", ".join(f"{k}={v!r}" for k, v in job.parameters.items())
    return shown if len(shown) <= 300 else shown[:299] + "…"


def _field(title: str, value: str, *, short: bool) -> dict[str, Any]:
    return {"title": title, "value": value, "short": short}


def _attachment(
    state: str, title: str, link: str | None, text: str, facts: list[tuple[str, str, bool]]
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "fallback": f"{title}: {state}",
        "color": COLOURS.get(state, "#9e9e9e"),
        "title": title,
        "fields": [_field(t, v, short=s) for t, v, s in facts],
        "footer": PRODUCT,
    }
    if link:
        out["title_link"] = link
    if text:
        out["text"] = text
    return out


def _job_props(job: Job, schedule: str | None) -> dict[str, Any]:
    gpu = job.gpu
    return {
        "kind": "job",
        "id": job.id,
        "name": job.name,
        "state": job.state,
        "reason": job.reason,
        "duration_seconds": _seconds(job.started_at, job.finished_at),
        "output_path": job.output_path,
        "sweep_id": job.group_id,
        "schedule_id": job.schedule_id,
        "schedule": schedule,
        "gpu_peak_memory_bytes": gpu.peak_memory_bytes if gpu else None,
        "gpu_mean_utilization_percent": gpu.mean_utilization_percent if gpu else None,
        "gpu_hours": gpu.gpu_hours_allocated if gpu else None,
    }


def _footer() -> str:
    return f"-- \nSent by {PRODUCT}. Choose what you are told, and where, in JupyterLab: Jobs, Notifications…"
