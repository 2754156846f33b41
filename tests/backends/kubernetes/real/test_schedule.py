"""A schedule on the real cluster: one CronJob, which the CronJob controller starts on the minute (the
CronJob's shortest period); its pod makes the run's folder and runs the runner there; the server adopts
and lists the run. Deleting the schedule deletes the CronJob."""

from __future__ import annotations

from helpers import wait_until

from jupyter_gpu_env.schedules.service import ScheduleService


async def test_a_cronjob_started_by_its_controller_runs_the_notebook_and_the_run_is_listed(real):
    nb = real.notebook("daily.ipynb", ["print('x =', x)"], parameters="x = 0")
    svc = real.service()
    sched = ScheduleService(svc)
    made = await sched.create({"notebook_path": nb, "backend": "kubernetes", "schedule": "* * * * *",
                               "parameters": {"x": 7}, "name": "nightly"})  # fmt: skip
    # In the same minute, a schedule whose pods cannot run the tick (the image's "python" runs nothing):
    # its CronJob starts Jobs that make no run, and the schedule says so.
    real.db = real.db.with_name("broken.sqlite")
    broken = ScheduleService(real.service(real.backend(settings=real.settings(python="true"))))
    silent = await broken.create({"notebook_path": nb, "backend": "kubernetes", "schedule": "* * * * *",
                                  "name": "broken"})  # fmt: skip
    (cron,) = [c for c in real._list("/apis/batch/v1", "cronjobs", f"jupyter-gpu-env/schedule={made.id}")]
    assert cron["spec"]["schedule"] == "* * * * *" and not cron["spec"].get("suspend")

    def started_jobs():
        return real.jobs(f"jupyter-gpu-env/schedule={made.id}")

    await wait_until(started_jobs, within=75, every=1, what="the CronJob controller starting a Job")

    async def run_succeeded():
        await sched.tick()
        await svc.refresh()
        runs = (await svc.list(schedule=made.id, limit=10)).items
        return [r for r in runs if r.state == "succeeded"] or None

    def seen() -> str:
        jobs = [(j["metadata"]["name"], j.get("status", {}).get("conditions")) for j in started_jobs()]
        return f"a scheduled run listed and succeeded (Jobs: {jobs})"

    try:
        (run, *_) = await wait_until(run_succeeded, within=120, every=1, what=seen)
        assert run.schedule_id == made.id and run.parameters == {"x": 7}
        assert "x = 7" in (real.root / run.log_path).read_text()
        assert run.backend_job_id in {j["metadata"]["name"] for j in started_jobs()}

        async def named_without_run():
            await broken.keeping.refresh_armed(force=True)
            message = (await broken.get(silent.id)).keeper.message or ""
            return message if "ended without making a run" in message else None

        message = await wait_until(named_without_run, within=120, every=1, what="the silent schedule named")
        assert "kubectl logs" in message and not (await broken.jobs.list(schedule=silent.id)).items
    finally:
        await sched.delete(made.id)
        await broken.delete(silent.id)
    await wait_until(lambda: not real._list("/apis/batch/v1", "cronjobs", f"jupyter-gpu-env/schedule={made.id}"),
                     within=30, every=0.5, what="the schedule's CronJob going")  # fmt: skip
