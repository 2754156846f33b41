"""Schedule expressions read and due times computed: ``schedules/timing.py`` and ``schedules/cron.py``.

Pure code, so every case is an exact expectation: the words of each error, the instants across the DST
changes of Europe/Rome and America/New_York (2026: Rome springs forward on 29 March and falls back on
25 October, New York on 8 March and 1 November), Chronos' repeating intervals with starts in the past.
"""

from __future__ import annotations

import math
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_gpu_env.contracts.schedules.timing import Timing, describe, parse
from jupyter_gpu_env.errors import InvalidRequest

HOUR = 3600.0
DAY = 86400.0


def at(text: str) -> float:
    """A Unix time from an ISO text with its offset."""
    return datetime.fromisoformat(text).timestamp()


def walls(timing: Timing, moments: list[float]) -> list[str]:
    """Instants as wall times with their offsets in the schedule's zone."""
    return [datetime.fromtimestamp(m, ZoneInfo(timing.timezone)).isoformat() for m in moments]


def next_walls(timing: Timing, after: float, count: int = 3) -> list[str]:
    """The next ``count`` runs after ``after``, as :func:`walls`."""
    return walls(timing, timing.next_runs(after, count))


def refused(expression: str, timezone: str = "UTC", **options: float) -> InvalidRequest:
    with pytest.raises(InvalidRequest) as caught:
        parse(expression, timezone, **options)
    return caught.value


# --- what is taken, and how it reads ---------------------------------------------------------------

GOOD = [
    # expression, zone, the cron line, the words
    ("@hourly", "UTC", "0 * * * *", "every hour (UTC)"),
    ("@daily", "UTC", "0 0 * * *", "every day at 00:00 (UTC)"),
    ("@midnight", "UTC", "0 0 * * *", "every day at 00:00 (UTC)"),
    ("@weekly", "UTC", "0 0 * * 0", "every Sunday at 00:00 (UTC)"),
    ("@monthly", "UTC", "0 0 1 * *", "on the 1st of every month at 00:00 (UTC)"),
    ("@yearly", "UTC", "0 0 1 1 *", "on the 1st of January at 00:00 (UTC)"),
    ("@ANNUALLY", "UTC", "0 0 1 1 *", "on the 1st of January at 00:00 (UTC)"),
    ("0 6 * * *", "Europe/Rome", "0 6 * * *", "every day at 06:00 (Europe/Rome)"),
    ("  0   6 * * *  ", "UTC", "0 6 * * *", "every day at 06:00 (UTC)"),
    ("* * * * *", "UTC", "* * * * *", "every minute (UTC)"),
    ("*/5 * * * *", "UTC", "*/5 * * * *", "every 5 minutes (UTC)"),
    ("5/20 * * * *", "UTC", "5/20 * * * *", "every 20 minutes from minute 5 (UTC)"),
    ("30 * * * *", "UTC", "30 * * * *", "every hour at minute 30 (UTC)"),
    ("0 */2 * * *", "UTC", "0 */2 * * *", "every 2 hours (UTC)"),
    ("30 1-23/2 * * *", "UTC", "30 1-23/2 * * *", "every 2 hours from 01:30 (UTC)"),
    ("0 */6 * * *", "UTC", "0 */6 * * *", "every day at 00:00, 06:00, 12:00 and 18:00 (UTC)"),
    ("0 9 * * mon-fri", "UTC", "0 9 * * mon-fri", "every weekday at 09:00 (UTC)"),
    (
        "*/15 9-17 * * 1-5",
        "UTC",
        "*/15 9-17 * * 1-5",
        "every 15 minutes from 09:00 to 17:45 on weekdays (UTC)",
    ),
    ("30 8 * jan,JUL 7", "UTC", "30 8 * jan,JUL 7", "every Sunday in January and July at 08:30 (UTC)"),
    ("0 0 * * SAT,sun", "UTC", "0 0 * * SAT,sun", "every Saturday and Sunday at 00:00 (UTC)"),
    ("0 0 1,15 * *", "UTC", "0 0 1,15 * *", "on the 1st and 15th of every month at 00:00 (UTC)"),
    ("0 6 29 2 *", "UTC", "0 6 29 2 *", "on the 29th of February at 06:00 (UTC)"),
    ("0 0 13 * 5", "UTC", "0 0 13 * 5", "on the 13th and on Fridays at 00:00 (UTC)"),
    ("0 0 1 * 0-6", "UTC", "0 0 1 * 0-6", "every day at 00:00 (UTC)"),
    ("0 0 ? * 1", "UTC", "0 0 ? * 1", "every Monday at 00:00 (UTC)"),
    ("* * * 12 *", "UTC", "* * * 12 *", "every minute in December (UTC)"),
]


@pytest.mark.parametrize(("expression", "zone", "cron", "words"), GOOD)
def test_cron_lines_and_aliases_are_read_and_put_in_words(expression, zone, cron, words):
    timing = parse(expression, zone)
    assert (timing.kind, timing.cron, timing.timezone) == ("cron", cron, zone)
    assert timing.expression == expression.strip()
    assert timing.start is timing.period is timing.repeats is None
    assert describe(timing) == words


BAD = [
    # expression, the words the message must hold
    ("61 * * * *", "minute 61 is out of range 0-59"),
    ("0 24 * * *", "hour 24 is out of range 0-23"),
    ("0 0 0 * *", "day of month 0 is out of range 1-31"),
    ("0 0 32 * *", "day of month 32 is out of range 1-31"),
    ("0 0 * 13 *", "month 13 is out of range 1-12"),
    ("0 0 * * 8", "weekday 8 is out of range 0-7"),
    ("0 0 * foo *", "month 'foo' is not a number: write 1-12 or jan-dec"),
    ("0 0 * * funday", "weekday 'funday' is not a number: write 0-7 or sun-sat"),
    ("mon * * * *", "minute 'mon' is not a number: write 0-59"),
    ("-1 * * * *", "minute '' is not a number"),
    ("* * * * * *", "a cron line has five fields (minute hour day month weekday), got 6 (seconds and years"),
    ("* * * *", "a cron line has five fields (minute hour day month weekday), got 4"),
    ("every day", "a cron line has five fields (minute hour day month weekday), got 2"),
    ("@fortnightly", "unknown alias @fortnightly: write @hourly, @daily"),
    ("@reboot", "unknown alias @reboot"),
    ("*/0 * * * *", "minute step '0' in '*/0' is not a whole number from 1 to 59"),
    ("*/x * * * *", "minute step 'x' in '*/x' is not a whole number"),
    ("0 */ * * *", "hour step '' in '*/' is not a whole number from 1 to 23"),
    ("*/60 * * * *", "it would run only once per hour; write that one value"),
    ("0 0 */40 * *", "day of month step '40' in '*/40' is not a whole number from 1 to 30"),
    ("0 22-2 * * *", "hour range 22-2 goes backwards: write the smaller end first (split one that wraps"),
    ("0 0 * * fri-mon", "weekday range fri-mon goes backwards"),
    ("1,,2 * * * *", "minute '1,,2' has an empty item"),
    ("? * * * *", "minute '?' is not a number"),
    ("0 0 31 2 *", "'0 0 31 2 *' never runs: February has no day 31"),
    ("0 0 30,31 feb *", "never runs: February has no day 30, 31"),
    ("0 0 31 4,6 *", "never runs: April and June have no day 31"),
    ("", "the schedule is empty: write a cron line or a repeating interval, such as '0 6 * * *'"),
    ("   ", "the schedule is empty"),
    (
        "R/not-a-date/PT1H",
        "the start 'not-a-date' is not an ISO-8601 date and time: write it like 2026-12-01T06:00:00Z",
    ),
    ("R/2026-13-01T06:00:00Z/PT1H", "the start '2026-13-01T06:00:00Z' is not an ISO-8601 date and time"),
    ("R//PT1H", "an interval needs its start written (Chronos' empty start, 'now', is not taken)"),
    ("R0/2026-12-01T06:00:00Z/PT1H", "R0 never runs: write R1 for one run"),
    ("Rx/2026-12-01T06:00:00Z/PT1H", "'Rx' is not a repeat count: write R to repeat for ever, or Rn"),
    ("R-1/2026-12-01T06:00:00Z/PT1H", "'R-1' is not a repeat count"),
    ("R/2026-12-01T06:00:00Z", "a repeating interval has three parts, R[n]/start/period"),
    ("R/2026-12-01T06:00:00Z/PT1H/x", "a repeating interval has three parts, R[n]/start/period"),
    ("R/2026-12-01T06:00:00Z/PT0S", "the period PT0S is zero"),
    ("R/2026-12-01T06:00:00Z/P0D", "the period P0D is zero"),
    ("R/2026-12-01T06:00:00Z/P", "'P' is not an ISO-8601 period: write it like PT6H"),
    ("R/2026-12-01T06:00:00Z/PT", "'PT' is not an ISO-8601 period"),
    ("R/2026-12-01T06:00:00Z/P1.5D", "'P1.5D' is not an ISO-8601 period"),
    ("R/2026-12-01T06:00:00Z/6H", "'6H' is not an ISO-8601 period"),
    ("R/2026-12-01T06:00:00Z/P1H", "'P1H' is not an ISO-8601 period"),
    ("PT6H", "a period alone does not say when to start: write R/<start>/PT6H"),
    ("R/2026-12-01T06:00:00Z/PT30S", "runs every 30 s; this site allows schedules at most once every 60 s"),
    ("R/2026-12-01T06:00:00Z/PT0.5S", "runs every 0.5 s; this site allows schedules at most once every 60 s"),
]


@pytest.mark.parametrize(("expression", "words"), BAD)
def test_a_bad_schedule_is_a_400_that_says_what_is_wrong(expression, words):
    error = refused(expression)
    assert (error.status, error.reason) == (400, "invalid_schedule")
    assert words in error.message


@pytest.mark.parametrize(
    ("zone", "words"),
    [
        ("Europe/Roma", "unknown time zone 'Europe/Roma': write an IANA name such as 'Europe/Rome' or 'UTC'"),
        ("europe/rome", "unknown time zone 'europe/rome': did you mean 'Europe/Rome'?"),
        ("", "unknown time zone ''"),
        ("../../etc/passwd", "unknown time zone '../../etc/passwd'"),
        ("Europe", "unknown time zone 'Europe'"),
    ],
)
def test_an_unknown_time_zone_is_a_400_naming_it(zone, words):
    error = refused("0 6 * * *", zone)
    assert (error.status, error.reason) == (400, "unknown_timezone")
    assert words in error.message


def test_the_zone_defaults_to_utc_and_is_checked_for_intervals_too():
    assert parse("0 6 * * *").timezone == "UTC"
    assert refused("R/2026-12-01T06:00:00Z/PT1H", "Mars/Olympus").reason == "unknown_timezone"


# --- the minimum period ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "gap"),
    [
        ("* * * * *", 60),
        ("*/5 * * * *", 300),
        ("0,1 * * * *", 60),
        ("0 * * * *", HOUR),
        ("0 23,1 * * *", 2 * HOUR),
        ("0 6 * * *", DAY),
        ("0 6 * * 1-5", DAY),
        ("0 6 * * 1", 7 * DAY),
        ("0 6 1 * *", 28 * DAY),
        ("0 0 31 * *", 31 * DAY),
        ("0 6 29 2 *", (4 * 365 + 1) * DAY),
        ("R/2026-12-01T06:00:00Z/PT6H", 6 * HOUR),
        ("R/2026-12-01T06:00:00Z/PT1.5H", 1.5 * HOUR),
        ("R/2026-12-01T06:00:00Z/PT0,5M", 30),
        ("R/2026-12-01T06:00:00Z/P1W", 7 * DAY),
        ("R/2026-12-01T06:00:00Z/P1M", 28 * DAY),
        ("R/2026-12-01T06:00:00Z/P1Y2M10DT2H30M", (365 + 56 + 10) * DAY + 2.5 * HOUR),
        ("R1/2026-12-01T06:00:00Z/PT1S", math.inf),
    ],
)
def test_the_shortest_gap_between_two_runs(expression, gap):
    assert parse(expression, minimum_period=0).shortest_gap() == gap


def test_the_site_minimum_is_applied_to_cron_lines_and_intervals():
    assert parse("* * * * *").shortest_gap() == 60  # the default minimum allows every minute
    error = refused("*/5 * * * *", minimum_period=600)
    assert "runs every 5 min; this site allows schedules at most once every 10 min" in error.message
    uneven = refused("0,1 * * * *", minimum_period=120)
    assert (
        "runs 60 s apart at its closest; this site allows schedules at most once every 2 min"
        in uneven.message
    )
    assert "runs every 1 h; " in refused("R/2026-12-01T06:00:00Z/PT1H", minimum_period=2 * HOUR).message
    assert parse("R1/2026-12-01T06:00:00Z/PT1S").repeats == 1  # one run has no gap to be too short
    assert parse("R/2026-12-01T06:00:00Z/PT0.5S", minimum_period=0).shortest_gap() == 0.5


# --- cron lines: when they run ---------------------------------------------------------------------


def test_fields_steps_ranges_names_and_sunday_as_seven():
    after = at("2026-12-01T00:00:00+00:00")  # a Tuesday
    assert next_walls(parse("10-50/20 9 * * *"), after) == [
        "2026-12-01T09:10:00+00:00",
        "2026-12-01T09:30:00+00:00",
        "2026-12-01T09:50:00+00:00",
    ]
    sundays = ["2026-12-06T00:00:00+00:00", "2026-12-13T00:00:00+00:00", "2026-12-20T00:00:00+00:00"]
    for expression in ("@weekly", "0 0 * * 0", "0 0 * * 7", "0 0 * * SUN", "0 0 * * sun"):
        timing = parse(expression)
        assert next_walls(timing, after) == sundays, expression
    monthly = parse("0 0 1 jan,jul *")
    assert next_walls(monthly, after, 2) == [
        "2027-01-01T00:00:00+00:00",
        "2027-07-01T00:00:00+00:00",
    ]


def test_next_runs_are_strictly_after_and_as_many_as_asked():
    timing = parse("0 * * * *")
    due = at("2026-12-01T10:00:00+00:00")
    assert timing.next_runs(due, 2) == [due + HOUR, due + 2 * HOUR]
    assert timing.next_runs(due - 0.5, 1) == [due]
    assert timing.next_runs(due, 0) == []
    assert len(timing.next_runs(due, 100)) == 100


def test_vixie_rule_a_day_matching_either_restricted_day_field_runs():
    after = at("2026-02-01T00:00:00+00:00")  # a Sunday; the Fridays of February 2026 are 6, 13, 20, 27
    either = parse("0 0 15 * 5")
    assert next_walls(either, after, 5) == [
        "2026-02-06T00:00:00+00:00",
        "2026-02-13T00:00:00+00:00",
        "2026-02-15T00:00:00+00:00",
        "2026-02-20T00:00:00+00:00",
        "2026-02-27T00:00:00+00:00",
    ]
    only_fridays = parse("0 0 * * 5")  # a '*' day of month restricts nothing: Fridays alone
    assert next_walls(only_fridays, after, 2) == [
        "2026-02-06T00:00:00+00:00",
        "2026-02-13T00:00:00+00:00",
    ]
    only_the_15th = parse("0 0 15 * *")
    assert next_walls(only_the_15th, after, 2) == [
        "2026-02-15T00:00:00+00:00",
        "2026-03-15T00:00:00+00:00",
    ]
    # '*/2' restricts the day of month (as Kubernetes' CronJob reads it): odd days, or Fridays.
    stepped = parse("0 0 */2 * 5")
    assert next_walls(stepped, after, 4) == [
        "2026-02-03T00:00:00+00:00",
        "2026-02-05T00:00:00+00:00",
        "2026-02-06T00:00:00+00:00",
        "2026-02-07T00:00:00+00:00",
    ]


def test_29_february_jumps_years_and_skips_2100():
    timing = parse("0 6 29 2 *")
    assert next_walls(timing, at("2026-06-01T00:00:00+00:00")) == [
        "2028-02-29T06:00:00+00:00",
        "2032-02-29T06:00:00+00:00",
        "2036-02-29T06:00:00+00:00",
    ]
    # 2100 is no leap year: eight years from 2096 to the next. Still a handful of days looked at.
    assert next_walls(timing, at("2097-01-01T00:00:00+00:00"), 1) == ["2104-02-29T06:00:00+00:00"]


def test_spring_forward_a_skipped_wall_time_runs_once_when_the_clocks_jump():
    rome = parse("30 2 * * *", "Europe/Rome")
    assert next_walls(rome, at("2026-03-28T12:00:00+00:00")) == [
        "2026-03-29T03:00:00+02:00",  # 02:30 does not exist that day: it runs as the clocks jump past it
        "2026-03-30T02:30:00+02:00",
        "2026-03-31T02:30:00+02:00",
    ]
    new_york = parse("15 2 * * *", "America/New_York")
    assert next_walls(new_york, at("2026-03-07T12:00:00+00:00"), 2) == [
        "2026-03-08T03:00:00-04:00",
        "2026-03-09T02:15:00-04:00",
    ]
    # Every half hour: the skipped hour's times fall on real ones, and each instant runs once.
    half_hourly = parse("*/30 * * * *", "Europe/Rome")
    assert next_walls(half_hourly, at("2026-03-29T00:15:00+00:00"), 4) == [
        "2026-03-29T01:30:00+01:00",
        "2026-03-29T03:00:00+02:00",
        "2026-03-29T03:30:00+02:00",
        "2026-03-29T04:00:00+02:00",
    ]
    # A fixed time of day keeps its wall time: 23 hours between the two runs around the change.
    daily = parse("0 6 * * *", "America/New_York")
    runs = daily.next_runs(at("2026-03-07T00:00:00+00:00"), 2)
    assert walls(daily, runs) == ["2026-03-07T06:00:00-05:00", "2026-03-08T06:00:00-04:00"]
    assert runs[1] - runs[0] == 23 * HOUR


def test_fall_back_a_repeated_wall_time_runs_once_but_an_hourly_line_keeps_its_hours():
    rome = parse("30 2 * * *", "Europe/Rome")
    assert next_walls(rome, at("2026-10-24T12:00:00+00:00"), 2) == [
        "2026-10-25T02:30:00+02:00",
        "2026-10-26T02:30:00+01:00",
    ]
    new_york = parse("30 1 * * *", "America/New_York")
    assert next_walls(new_york, at("2026-10-31T12:00:00+00:00"), 2) == [
        "2026-11-01T01:30:00-04:00",
        "2026-11-02T01:30:00-05:00",
    ]
    hourly = parse("0 * * * *", "Europe/Rome")
    runs = hourly.next_runs(at("2026-10-24T23:30:00+00:00"), 4)
    assert walls(hourly, runs) == [
        "2026-10-25T02:00:00+02:00",
        "2026-10-25T02:00:00+01:00",
        "2026-10-25T03:00:00+01:00",
        "2026-10-25T04:00:00+01:00",
    ]
    assert {b - a for a, b in zip(runs, runs[1:], strict=False)} == {HOUR}


def test_runs_between_are_the_runs_missed_while_the_server_was_down():
    hourly = parse("0 * * * *")
    down, up = at("2026-12-01T09:10:00+00:00"), at("2026-12-01T12:10:00+00:00")
    assert walls(hourly, hourly.runs_between(down, up)) == [
        "2026-12-01T10:00:00+00:00",
        "2026-12-01T11:00:00+00:00",
        "2026-12-01T12:00:00+00:00",
    ]
    nine, noon = at("2026-12-01T09:00:00+00:00"), at("2026-12-01T12:00:00+00:00")
    assert hourly.runs_between(nine, noon) == [nine + HOUR, nine + 2 * HOUR, noon]  # (start, end]
    assert hourly.runs_between(nine, noon, limit=2) == [nine + HOUR, nine + 2 * HOUR]
    assert hourly.runs_between(noon, nine) == []
    # A year down on an every-minute line: the earliest thousand, found at once.
    assert len(parse("* * * * *").runs_between(nine, nine + 365 * DAY)) == 1000


# --- ISO-8601 repeating intervals, as Chronos writes them ------------------------------------------


def test_a_chronos_interval_with_a_start_in_the_past_runs_on_from_now():
    timing = parse("R/2021-07-22T12:00:00.000Z/PT24H")
    assert (timing.kind, timing.cron, timing.repeats) == ("interval", None, None)
    assert timing.start == datetime.fromisoformat("2021-07-22T12:00:00+00:00")
    assert timing.period is not None and timing.period.exact == 24 * HOUR
    assert next_walls(timing, at("2026-12-01T13:00:00+00:00")) == [
        "2026-12-02T12:00:00+00:00",
        "2026-12-03T12:00:00+00:00",
        "2026-12-04T12:00:00+00:00",
    ]
    assert next_walls(timing, at("2026-12-01T12:00:00+00:00"), 1) == ["2026-12-02T12:00:00+00:00"]
    assert describe(timing) == "every 24 hours from 2021-07-22 12:00 UTC"


def test_a_finite_interval_runs_out():
    timing = parse("R5/2026-12-01T06:00:00.000Z/P1D")
    assert timing.repeats == 5
    assert next_walls(timing, at("2026-11-01T00:00:00+00:00"), 2) == [
        "2026-12-01T06:00:00+00:00",  # a start in the future is the first run
        "2026-12-02T06:00:00+00:00",
    ]
    assert next_walls(timing, at("2026-12-03T07:00:00+00:00")) == [
        "2026-12-04T06:00:00+00:00",
        "2026-12-05T06:00:00+00:00",
    ]
    assert timing.next_runs(at("2026-12-05T06:00:00+00:00")) == []
    assert len(timing.runs_between(0, at("2030-01-01T00:00:00+00:00"))) == 5
    six_hourly = parse("R5/2026-12-01T06:00:00Z/PT6H")
    assert describe(six_hourly) == "every 6 hours from 2026-12-01 06:00 UTC, 5 times"
    assert len(six_hourly.runs_between(0, at("2027-01-01T00:00:00+00:00"))) == 5
    once = parse("R1/2026-12-01T06:00:00+01:00/PT1H", "Europe/Rome")
    assert describe(once) == "every hour from 2026-12-01 06:00 Europe/Rome, once"
    assert next_walls(once, 0) == ["2026-12-01T06:00:00+01:00"]


def test_calendar_steps_keep_the_wall_time_exact_steps_do_not():
    daily = parse("R/2026-03-27T06:00:00/P1D", "Europe/Rome")  # no offset: a wall time in the zone
    assert daily.start == datetime.fromisoformat("2026-03-27T05:00:00+00:00")
    assert next_walls(daily, at("2026-03-27T00:00:00+00:00")) == [
        "2026-03-27T06:00:00+01:00",
        "2026-03-28T06:00:00+01:00",
        "2026-03-29T06:00:00+02:00",
    ]
    exact = parse("R/2026-03-27T05:00:00Z/PT24H", "Europe/Rome")
    assert next_walls(exact, at("2026-03-27T00:00:00+00:00")) == [
        "2026-03-27T06:00:00+01:00",
        "2026-03-28T06:00:00+01:00",
        "2026-03-29T07:00:00+02:00",
    ]
    # A start long past on a calendar period: found without stepping day by day from 2021 (and right).
    past = parse("R/2021-01-01T06:00:00/P1D", "America/New_York")
    assert next_walls(past, at("2026-11-01T00:00:00+00:00"), 2) == [
        "2026-11-01T06:00:00-05:00",
        "2026-11-02T06:00:00-05:00",
    ]
    # A month from the 31st lands on each month's last day, never drifting to the 28th.
    monthly = parse("R/2026-01-31T09:00:00Z/P1M")
    assert [w[:10] for w in next_walls(monthly, 0, 4)] == [
        "2026-01-31",
        "2026-02-28",
        "2026-03-31",
        "2026-04-30",
    ]
    # A calendar step onto a wall time the clocks skip runs as they jump, and the next day as written.
    skipping = parse("R/2026-03-28T02:30:00/P1D", "Europe/Rome")
    assert next_walls(skipping, 0) == [
        "2026-03-28T02:30:00+01:00",
        "2026-03-29T03:00:00+02:00",
        "2026-03-30T02:30:00+02:00",
    ]
    assert parse("R/2026-03-29T02:30:00/P1D", "Europe/Rome").start == datetime.fromisoformat(
        "2026-03-29T01:00:00+00:00"
    )
    mixed = parse("R3/2026-12-01T06:00:30/P1DT12H")
    assert describe(mixed) == "every 1 day and 12 hours from 2026-12-01 06:00:30 UTC, 3 times"
    assert next_walls(mixed, 0) == [
        "2026-12-01T06:00:30+00:00",
        "2026-12-02T18:00:30+00:00",
        "2026-12-04T06:00:30+00:00",
    ]


def test_a_start_with_an_offset_is_that_instant_whatever_the_zone():
    timing = parse("R/2026-12-01T06:00:00+01:00/PT6H", "America/New_York")
    assert timing.start == datetime.fromisoformat("2026-12-01T05:00:00+00:00")
    assert describe(timing) == "every 6 hours from 2026-12-01 00:00 America/New_York"
    assert parse("r/2026-12-01/pt1h").period is not None  # any case; a date alone is its midnight


# --- the search against a plain reference ----------------------------------------------------------


def _field(low: int, high: int) -> st.SearchStrategy[tuple[str, set[int], bool]]:
    """A field's text, the values it allows and whether it is '*', built side by side."""
    number = st.integers(low, high)
    single = number.map(lambda n: (str(n), {n}, False))
    span = (
        st.tuples(number, number)
        .map(sorted)
        .map(lambda p: (f"{p[0]}-{p[1]}", set(range(p[0], p[1] + 1)), False))
    )
    step = st.integers(2, high - low).map(lambda s: (f"*/{s}", set(range(low, high + 1, s)), False))
    listed = st.lists(number, min_size=2, max_size=4, unique=True).map(
        lambda ns: (",".join(map(str, ns)), set(ns), False)
    )
    return st.one_of(st.just(("*", set(range(low, high + 1)), True)), single, span, step, listed)


def _reference(fields: list[tuple[str, set[int], bool]], after: float, count: int) -> list[float]:
    """The next runs in UTC, day by day and minute by minute from the sets alone."""
    (_, minutes, _), (_, hours, _), (_, days, days_star), (_, months, _), (_, weekdays, weekdays_star) = (
        fields
    )
    weekdays = {d % 7 for d in weekdays}
    found: list[float] = []
    day = datetime.fromtimestamp(after, ZoneInfo("UTC")).replace(hour=0, minute=0, second=0, microsecond=0)
    for _ in range(9 * 366):
        on_day, on_weekday = day.day in days, day.isoweekday() % 7 in weekdays
        runs = (on_day and on_weekday) if days_star or weekdays_star else (on_day or on_weekday)
        if day.month in months and runs:
            for hour in sorted(hours):
                for minute in sorted(minutes):
                    moment = (day + timedelta(hours=hour, minutes=minute)).timestamp()
                    if moment > after:
                        found.append(moment)
                        if len(found) == count:
                            return found
        day += timedelta(days=1)
    return found


@settings(max_examples=60, deadline=None)
@given(
    fields=st.tuples(_field(0, 59), _field(0, 23), _field(1, 31), _field(1, 12), _field(0, 7)),
    after=st.integers(int(at("2024-01-01T00:00:00+00:00")), int(at("2032-01-01T00:00:00+00:00"))),
)
def test_next_runs_agree_with_a_day_by_day_reference(fields, after):
    line = " ".join(text for text, _, _ in fields)
    try:
        timing = parse(line)
    except InvalidRequest as error:
        assert "never runs" in error.message
        assert _reference(list(fields), after, 1) == []
        return
    assert timing.next_runs(after, 5) == _reference(list(fields), after, 5)


def test_a_run_day_search_skips_whole_months():
    line = parse("0 0 31 12 *").line
    assert list(line.run_days(date(2026, 1, 1), date(2028, 12, 31))) == [
        date(2026, 12, 31),
        date(2027, 12, 31),
        date(2028, 12, 31),
    ]


@settings(max_examples=25, deadline=None)
@given(
    fields=st.tuples(_field(0, 59), _field(0, 23)),
    change=st.sampled_from(
        [  # the instants the clocks change
            ("Europe/Rome", "2026-03-29T01:00:00+00:00"),
            ("Europe/Rome", "2026-10-25T01:00:00+00:00"),
            ("America/New_York", "2026-03-08T07:00:00+00:00"),
            ("America/New_York", "2026-11-01T06:00:00+00:00"),
        ]
    ),
)
def test_across_a_dst_change_runs_rise_and_each_is_its_wall_time_or_the_jump_past_it(fields, change):
    zone, jump = change
    minutes, hours = fields[0][1], fields[1][1]
    timing = parse(" ".join(text for text, _, _ in fields) + " * * *", zone)
    runs = timing.next_runs(at(jump) - 2 * HOUR, 40)
    assert runs == sorted(set(runs)) and len(runs) == 40
    tz = ZoneInfo(zone)
    skipped_hour = datetime.fromtimestamp(at(jump), tz).hour - 1  # at spring forward; none in autumn
    for moment in runs:
        wall = datetime.fromtimestamp(moment, tz)
        if not (wall.hour in hours and wall.minute in minutes):
            assert moment == at(jump) and skipped_hour in hours
    if "-03-" in jump and skipped_hour in hours and runs[0] <= at(jump) <= runs[-1]:
        assert at(jump) in runs


# --- the calendar's ends ----------------------------------------------------------------------------

# A day short of each end of Python's dates (the years 1 and 9999): what the parser guarantees.
EARLIEST = datetime.fromisoformat("0001-01-02T00:00:00+00:00").timestamp()
LATEST = datetime.fromisoformat("9999-12-30T00:00:00+00:00").timestamp()
EAST, WEST = ZoneInfo("Pacific/Kiritimati"), ZoneInfo("Pacific/Pago_Pago")  # +14:00, -11:00


def _shown_everywhere(moments: list[float]) -> None:
    for m in moments:
        assert EARLIEST <= m <= LATEST
        for zone in (EAST, WEST):
            datetime.fromtimestamp(m, zone).isoformat()  # a date on every zone's clocks


@pytest.mark.parametrize(
    ("expression", "zone"),
    [
        ("R/9999-12-29T00:00:00Z/PT1H", "UTC"),
        ("R/9999-12-01T06:00:00/P1D", "Pacific/Kiritimati"),
        ("R/9999-01-31T06:00:00/P1M", "Pacific/Pago_Pago"),
        ("R/2026-12-01T06:00:00Z/P1000Y", "UTC"),
        ("0 6 * * *", "Pacific/Kiritimati"),
        ("0 0 29 2 *", "Pacific/Pago_Pago"),
    ],
)
def test_every_time_computed_is_a_date_in_any_zone_and_the_runs_end_with_the_calendar(expression, zone):
    timing = parse(expression, zone)
    for after in (LATEST - 40 * DAY, LATEST - DAY, LATEST, LATEST + DAY, 1e300):
        _shown_everywhere(timing.next_runs(after, 50))
    _shown_everywhere(timing.runs_between(LATEST - 400 * DAY, 1e300, limit=500))
    assert timing.next_runs(LATEST) == [] and timing.runs_between(LATEST, 1e300) == []


def test_an_interval_runs_up_to_the_last_instant_and_no_further():
    timing = parse("R/9999-12-29T00:00:00Z/PT1H")
    runs = timing.next_runs(0, 100)
    assert len(runs) == 25 and runs[-1] == LATEST
    assert timing.runs_between(LATEST - 2 * HOUR, 1e300) == [LATEST - HOUR, LATEST]


@pytest.mark.parametrize(
    ("expression", "zone", "words"),
    [
        ("R/9999-12-31T23:00:00Z/PT1H", "UTC", "the start 9999-12-31T23:00:00Z is outside"),
        ("R/9999-12-30T00:00:01Z/PT1H", "UTC", "the start 9999-12-30T00:00:01Z is outside"),
        ("R/0001-01-01T23:59:59Z/PT1H", "UTC", "the start 0001-01-01T23:59:59Z is outside"),
        ("R/9999-12-31T23:59:00/PT1H", "America/New_York", "is outside"),
        ("R/0001-01-01T00:30:00/PT1H", "Asia/Tokyo", "is outside"),
        ("R/9999-12-29T23:30:00Z/PT1H", "UTC", "puts the second run past 9999-12-30 UTC"),
        ("R/2026-12-01T06:00:00Z/P8000Y", "UTC", "puts the second run past 9999-12-30 UTC"),
        (f"R/2026-12-01T06:00:00Z/PT{'9' * 150}S", "UTC", "write a shorter period"),
        ("R100000000/2026-12-01T06:00:00Z/PT1H", "UTC", "R100000000 runs would go on past 9999-12-30 UTC"),
        ("R4/9999-12-29T00:00:00Z/PT12H", "UTC", "write fewer runs, or R to repeat until then"),
    ],
)
def test_an_interval_whose_times_pass_the_calendars_ends_is_refused_saying_how_to_write_it(
    expression, zone, words
):
    assert words in refused(expression, zone).message


def test_what_fits_the_calendar_is_taken():
    assert len(parse("R2/9999-12-29T00:00:00Z/PT24H").next_runs(0)) == 2
    assert len(parse("R1/2026-12-01T06:00:00Z/P9000Y").next_runs(0)) == 1  # one run: no period passes
    assert parse("R/0001-01-02T00:00:00Z/P1D", "Pacific/Pago_Pago").next_runs(at("2026-12-01T00:00:00+00:00"))
