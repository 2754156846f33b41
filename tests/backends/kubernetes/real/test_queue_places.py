"""Where queued jobs stand while Kueue holds them over quota: their places in the LocalQueue from Kueue's
visibility API (``localqueues/pendingworkloads``, served by Kueue through the aggregation layer), read
with the server's own account (the guide's Role grants it)."""

from __future__ import annotations

import asyncio
import calendar
import time

from helpers import wait_for_job, wait_until


async def test_jobs_held_over_quota_show_their_places_in_the_local_queue(real):
    nb = real.gated_notebook("hold.ipynb")
    svc = real.service()
    request = {
        "notebook_path": nb,
        "backend": "kubernetes",
        "resources": {"gpus": 2},
        "parameters": {"gate": str(real.root / "go")},
    }
    first = await svc.submit(request)
    first = await wait_for_job(svc, first.id, lambda j: j.state == "running", within=180, every=1)
    second = await svc.submit(request)

    def second_pending_a_second_ago():
        # Kueue orders a queue by priority, then creation time, which counts whole seconds: the third
        # Workload is made in a later second than the second one, so that their order is theirs
        made = [
            w for w in real.workloads() if w["metadata"]["name"].startswith(f"job-{second.backend_job_id}")
        ]
        when = made and calendar.timegm(
            time.strptime(made[0]["metadata"]["creationTimestamp"], "%Y-%m-%dT%H:%M:%SZ")
        )
        return bool(made) and time.time() >= when + 1

    await wait_until(second_pending_a_second_ago, within=30, every=0.2, what="the second job's Workload")
    third = await svc.submit(request)

    async def placed():
        await svc.refresh()
        jobs = [await svc.get(second.id), await svc.get(third.id)]
        return jobs if all(j.queue_position for j in jobs) else None

    try:
        second, third = await wait_until(placed, within=60, every=1, what=lambda: "places in the queue")
    except AssertionError:
        shown = [(j.state, j.queue_position, j.queue_name, j.pending_reason)
                 for j in [await svc.get(second.id), await svc.get(third.id)]]  # fmt: skip
        raise AssertionError(
            f"no places after 60 s (visibility API {real.plane.visibility}): {shown}"
        ) from None
    assert (second.queue_position, third.queue_position) == (1, 2)
    # as Kueue's visibility API itself says (read as admin)
    path = (
        f"/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/{real.namespace}/localqueues/{second.queue_name}"
    )
    pending = real.get(path + "/pendingworkloads")["items"]
    assert [w["positionInLocalQueue"] for w in pending] == [0, 1]
    assert [w["metadata"]["ownerReferences"][0]["name"] for w in pending] == [
        second.backend_job_id,
        third.backend_job_id,
    ]
    assert second.queue_name == third.queue_name == real.tenancy.local_queue
    assert second.state == third.state == "queued" and "quota" in (second.pending_reason or "")
    await asyncio.gather(*(svc.cancel(j.id) for j in (first, second, third)))
    await real.wait_gone(within=60)
