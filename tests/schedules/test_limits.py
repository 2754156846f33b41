"""No time value breaks the schedules (issue 35, item 2), on a real server with the local backend.

Python's dates end at the years 1 and 9999: an expression whose times fall outside them (a start at the
very end of 9999, a period of 150 nines, a start near year 1 written in a zone east of UTC) is refused
when it is written, with words saying how to write it; a stored one that cannot be computed (written by
an older version, or by hand) is listed saying so, never a 500 for the whole list; and a request that
fails stores nothing.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from helpers import body, error, write_notebook

from jupyter_gpu_env.schedules.records import ScheduleRecord, ScheduleRecords

NINES = "9" * 150


@pytest.fixture
def jp_server_config(jp_server_config, demo_app_config):
    return {**jp_server_config, "GpuEnvApp": {**demo_app_config}}


def _services(jp_serverapp):
    return jp_serverapp.web_app.settings["gpu_env_services"]


def _folders(base: Path) -> list[str]:
    """What the schedules' folder holds, less hidden entries (lock files, kept on purpose)."""
    return sorted(p.name for p in base.iterdir() if not p.name.startswith(".")) if base.exists() else []


@pytest.mark.parametrize(
    ("expression", "words"),
    [
        ("R/9999-12-31T23:00:00Z/PT1H", "9999-12-30"),
        (f"R/2026-12-01T06:00:00Z/PT{NINES}H", "shorter"),
        (f"R/2026-12-01T06:00:00Z/PT{NINES}S", "shorter"),
        (f"R/2026-12-01T06:00:00Z/P{NINES}D", "shorter"),
        (f"R3/2026-12-01T06:00:00Z/P{NINES}Y", "shorter"),
        ("R100000000/2026-12-01T06:00:00Z/PT1H", "fewer"),
    ],
)
async def test_times_past_the_calendar_are_refused_and_the_request_stores_nothing(
    api, jp_root_dir, jp_serverapp, expression, words
):
    nb = write_notebook(jp_root_dir, "far.ipynb", ["print(1)"])
    req = {"notebook_path": nb, "schedule": expression}
    err = await error(api("schedules", method="POST", body=json.dumps(req)), 400)
    assert err["reason"] == "invalid_schedule" and words in err["message"], err
    assert (await body(await api("schedules")))["items"] == []
    assert _folders(_services(jp_serverapp).schedules.base) == []
    # The same words before anything is made.
    preview = await error(api("schedules", "preview", params={"schedule": expression}), 400)
    assert preview["message"] == err["message"]


async def test_a_change_to_times_past_the_calendar_is_refused_and_changes_nothing(api, jp_root_dir):
    nb = write_notebook(jp_root_dir, "ok.ipynb", ["print(1)"])
    req = {"notebook_path": nb, "schedule": "@daily", "name": "kept"}
    made = await body(await api("schedules", method="POST", body=json.dumps(req)))
    change = {"schedule": "R/9999-12-31T23:00:00Z/PT1H", "name": "changed"}
    err = await error(api("schedules", made["id"], method="PATCH", body=json.dumps(change)), 400)
    assert err["reason"] == "invalid_schedule"
    shown = await body(await api("schedules", made["id"]))
    assert (shown["schedule"], shown["name"]) == ("@daily", "kept")
    assert len(shown["next_runs"]) == 3


# Starts near year 1 or 9999 in each way the start and the zone can meet the calendar's ends.
AT_THE_ENDS = [
    ("R/9999-12-31T23:00:00Z/PT1H", "UTC"),  # the second run would be in 10000
    ("R/9999-12-31T22:00:00Z/PT1H", "Asia/Tokyo"),  # in 9999 in UTC, in 10000 on Tokyo's clocks
    ("R/9999-12-31T00:00:00Z/P1D", "Asia/Tokyo"),  # the same, on a calendar period
    ("R/9999-12-31T23:59:00/PT1H", "America/New_York"),  # a wall time that is 10000 in UTC
    ("R/9999-12-31T23:00:00-12:00/PT1H", "UTC"),  # an offset that puts it in 10000 in UTC
    ("R/0001-01-01T00:30:00/PT1H", "Asia/Tokyo"),  # a wall time that is year 0 in UTC
    ("R/0001-01-01T00:00:00+14:00/PT1H", "UTC"),  # an offset that puts it in year 0 in UTC
    ("R/0001-01-01T00:00:00Z/P1D", "America/New_York"),  # year 0 on New York's clocks
]


@pytest.mark.parametrize(("expression", "zone"), AT_THE_ENDS)
async def test_previews_at_the_ends_of_the_calendar_are_400s_saying_how_to_write_them(api, expression, zone):
    params = {"schedule": expression, "timezone": zone}
    err = await error(api("schedules", "preview", params=params), 400)
    assert err["reason"] == "invalid_schedule", err
    assert "0001-01-02" in err["message"] and "9999-12-30" in err["message"], err["message"]
    assert "2026-12-01T06:00:00Z" in err["message"]  # how to write one


async def test_the_last_runs_a_schedule_can_have_are_shown_and_then_it_ends(api):
    params = {"schedule": "R/9999-12-29T23:00:00Z/PT1H", "timezone": "Pacific/Kiritimati"}
    preview = await body(await api("schedules", "preview", params=params))
    assert [d["utc"] for d in preview["next_runs"]] == ["9999-12-29T23:00:00Z", "9999-12-30T00:00:00Z"]
    assert preview["next_runs"][-1]["local"] == "9999-12-30T14:00:00+14:00"
    params = {"schedule": "R/0001-01-02T00:00:00Z/P1D", "timezone": "Pacific/Pago_Pago"}
    preview = await body(await api("schedules", "preview", params=params))
    assert len(preview["next_runs"]) == 3 and preview["next_runs"][0]["at"] > time.time()


async def test_a_stored_schedule_whose_times_cannot_be_computed_is_listed_saying_so(
    api, jp_root_dir, jp_serverapp
):
    nb = write_notebook(jp_root_dir, "daily.ipynb", ["print(1)"])
    made = []
    for name in ("good", "far", "huge", "mars", "words"):
        req = {"notebook_path": nb, "schedule": "@daily", "name": name}
        made.append(await body(await api("schedules", method="POST", body=json.dumps(req))))
    good, *damaged = (m["id"] for m in made)
    services = _services(jp_serverapp)
    # As an older version stored them, or a hand edited the store.
    for sid, (expression, zone) in zip(
        damaged,
        [
            ("R/9999-12-31T23:00:00Z/PT1H", "UTC"),
            (f"R/2026-12-01T06:00:00Z/PT{NINES}H", "UTC"),
            ("0 6 * * *", "Mars/Olympus_Mons"),
            ("not a schedule", "UTC"),
        ],
        strict=True,
    ):
        await ScheduleRecords(services.jobs.store.db).update(sid, expression=expression, timezone=zone)
    now = time.time()
    lost = ScheduleRecord(
        id="a" * 12, name="lost", backend="local", notebook_path=nb,
        folder=str(services.schedules.base / "lost-aaaaaaaaaaaa"), expression="R/9999-12-31T23:00:00Z/PT1H",
        timezone="UTC", created_at=now, updated_at=now, snapshot_at=now, checked_until=now,
    )  # fmt: skip
    await ScheduleRecords(services.jobs.store.db).insert(lost)  # and its folder gone too
    listed = await body(await api("schedules"))
    assert {s["id"] for s in listed["items"]} == {good, *damaged, lost.id}
    for shown in listed["items"]:
        if shown["id"] == good:
            assert len(shown["next_runs"]) == 3
            continue
        assert shown["next_runs"] == [], shown
        assert shown["description"].startswith("Its times cannot be computed: "), shown["description"]
        assert shown["description"].endswith("Change its schedule or delete it."), shown["description"]
    one = await body(await api("schedules", damaged[0]))
    assert "9999-12-30" in one["description"]
    await services.schedules.tick()  # the server's timer passes over them, and goes on
    # A change that leaves its times as stored conflicts with what is stored; one that sends new ones is taken.
    err = await error(api("schedules", damaged[0], method="PATCH", body=json.dumps({"name": "x"})), 409)
    assert err["reason"] == "invalid_schedule" and "Send its schedule anew" in err["message"]
    plan = services.schedules.keeping.plan(
        await ScheduleRecords(services.jobs.store.db).get(damaged[0]), None
    )
    assert (plan.next_due, plan.cron) == (None, None)  # what a batch system would be told: nothing to run
    change = {"schedule": "R/2027-01-01T00:00:00Z/P1D"}
    changed = await body(await api("schedules", damaged[0], method="PATCH", body=json.dumps(change)))
    assert len(changed["next_runs"]) == 3 and changed["description"].startswith("every day")
    assert (await api("schedules", damaged[3], method="DELETE")).code == 204
