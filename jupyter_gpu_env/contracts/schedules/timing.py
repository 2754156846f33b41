"""The one reader of schedule expressions, and when a schedule is due: pure, standard library only.

Two forms: a cron line (``cron.py`` reads it and says how its wall-clock times meet a DST change) and an
ISO-8601 repeating interval as Chronos writes it, ``R[n]/start/period``:

- ``R`` repeats for ever, ``Rn`` runs n times in all (``R0`` is refused: it never runs);
- the start is a date and time with ``Z`` or an offset, or with none, then a wall time in the schedule's
  zone; a start in the past is fine (the runs are start + k × period, the next ones after now). Chronos'
  empty start ("start now") is not taken: the expression is stored and read again, and "now" would move;
- the period ``PnYnMnWnDTnHnMnS``: years, months, weeks and days are calendar steps in the schedule's zone
  (``P1D`` from 06:00 stays at 06:00 across a DST change; a month from the 31st ends on a shorter month's
  last day), hours, minutes and seconds exact durations (fractions allowed there).

A wall time a calendar step lands on is resolved as the cron times are (``cron.instant``): one that does
not exist runs at the moment the clocks jump, one that occurs twice runs at the first.

Every time is an instant from EARLIEST to LATEST: Python's dates end at the years 1 and 9999, and a day
short of each end every instant is a date and time in UTC and on any zone's clocks (no offset is a day),
so whatever computes with a schedule's times (next runs, previews, the runs between two times, the
local times shown) can never overflow. An interval is checked against them when it is read (its start,
its second run, its last when it has one: a 400 saying how to write it); a schedule that runs for ever
ends at LATEST, as a cron line does.
"""

from __future__ import annotations

import calendar
import contextlib
import itertools
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cached_property
from typing import Literal
from zoneinfo import ZoneInfo, available_timezones

from ...errors import InvalidRequest
from .cron import CronLine, bad, instant, joined, line_words, parse_cron

EARLIEST = datetime(1, 1, 2, tzinfo=UTC).timestamp()
LATEST = datetime(9999, 12, 30, tzinfo=UTC).timestamp()
_ENDS = "from 0001-01-02 to 9999-12-30 UTC"

_NUMBER = r"(\d+(?:[.,]\d+)?)"
_PERIOD = re.compile(
    rf"P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:{_NUMBER}H)?(?:{_NUMBER}M)?(?:{_NUMBER}S)?)?"
)
_UNITS = ["year", "month", "week", "day", "hour", "minute", "second"]
_EXAMPLE = "'0 6 * * *' (every day at 06:00) or 'R/2026-12-01T06:00:00Z/P1D' (every day from a start)"


@dataclass(frozen=True)
class Period:
    """An ISO-8601 duration as written: calendar steps and an exact part."""

    text: str  # upper-cased, as written
    years: int = 0
    months: int = 0
    weeks: int = 0
    days: int = 0
    hours: float = 0
    minutes: float = 0
    seconds: float = 0

    @property
    def exact(self) -> float:
        """The exact part in seconds."""
        return self.hours * 3600 + self.minutes * 60 + self.seconds

    @property
    def calendar(self) -> bool:
        return bool(self.years or self.months or self.weeks or self.days)

    @property
    def shortest(self) -> float:
        """Its length in seconds at the shortest: months of 28 days, years of 365 (DST changes aside)."""
        return (self.years * 365 + self.months * 28 + self.weeks * 7 + self.days) * 86400 + self.exact

    @property
    def average(self) -> float:
        return (
            self.years * 365.2425 + self.months * 30.436875 + self.weeks * 7 + self.days
        ) * 86400 + self.exact

    def words(self) -> str:
        values = [self.years, self.months, self.weeks, self.days, self.hours, self.minutes, self.seconds]
        parts = [(value, unit) for value, unit in zip(values, _UNITS, strict=True) if value]
        if len(parts) == 1 and parts[0][0] == 1:
            return f"every {parts[0][1]}"
        return "every " + joined([f"{value:g} {unit}{'' if value == 1 else 's'}" for value, unit in parts])

    def step(self, wall: datetime, k: int) -> datetime:
        """``wall`` moved k calendar steps (the exact part not added)."""
        month = wall.month - 1 + k * (self.years * 12 + self.months)
        year, month = wall.year + month // 12, month % 12 + 1
        day = min(wall.day, calendar.monthrange(year, month)[1])
        return wall.replace(year=year, month=month, day=day) + timedelta(
            days=k * (self.weeks * 7 + self.days)
        )


@dataclass(frozen=True)
class Timing:
    """When a schedule is due. Make one with :func:`parse`."""

    expression: str  # as given, stripped
    kind: Literal["cron", "interval"]
    timezone: str  # an IANA name, checked
    cron: str | None  # the five-field line (an alias expanded); None for an interval
    start: datetime | None = None  # an interval's first run, aware, in UTC
    period: Period | None = None
    repeats: int | None = None  # an interval's runs in all; None: for ever
    local_start: datetime | None = field(default=None, repr=False, compare=False)  # the start's wall time

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)  # zoneinfo keeps one instance per name

    @cached_property
    def line(self) -> CronLine:
        assert self.cron is not None, "an interval has no cron line"
        return parse_cron(self.cron)

    def next_runs(self, after: float, count: int = 3) -> list[float]:
        """The next ``count`` due times strictly after ``after`` (Unix times), fewer when a finite interval
        runs out (or a cron line's next run is more than nine years after the one before)."""
        return list(itertools.islice(self._runs(after), max(count, 0)))

    def runs_between(self, start: float, end: float, limit: int = 1000) -> list[float]:
        """Due times in (start, end], the earliest ``limit`` of them (the runs missed while a server was
        down)."""
        found: list[float] = []
        for moment in self._runs(start):
            if moment > end or len(found) >= limit:
                break
            found.append(moment)
        return found

    def shortest_gap(self) -> float:
        """Seconds between two consecutive runs at the closest (infinite for a single run), on ordinary
        days: a DST change can shorten one gap of a calendar period by an hour."""
        if self.kind == "cron":
            return self.line.shortest_gap()
        assert self.period is not None
        return math.inf if self.repeats == 1 else self.period.shortest

    def _runs(self, after: float) -> Iterator[float]:
        if not after < LATEST:
            return
        if self.kind == "cron":
            # The last days before the calendar's end cannot be stepped over: the runs end there.
            with contextlib.suppress(OverflowError, ValueError):
                yield from itertools.takewhile(lambda t: t <= LATEST, self.line.runs(self.zone, after))
            return
        k = self._first_index(after)
        while self.repeats is None or k < self.repeats:
            moment = self._run(k)
            if moment is None:
                return
            yield moment
            k += 1

    def _run(self, k: int) -> float | None:
        """The k-th run (from 0), None past LATEST."""
        assert self.period is not None and self.start is not None and self.local_start is not None
        try:
            if self.period.calendar:
                moment = instant(self.period.step(self.local_start, k), self.zone) + k * self.period.exact
            else:
                moment = self.start.timestamp() + k * self.period.exact
        except (OverflowError, ValueError):
            return None
        return moment if EARLIEST <= moment <= LATEST else None

    def _first_index(self, after: float) -> int:
        """The index of the first run after ``after`` (before LATEST): estimated arithmetically, then
        settled exactly."""
        assert self.period is not None and self.start is not None
        first = self.start.timestamp()
        if after < first:
            return 0
        k = max(0, int((after - first) // self.period.average) - 1)
        while k > 0 and _or_end(self._run(k)) > after:  # an estimate past the end is past ``after``
            k -= 1
        while _or_end(self._run(k)) <= after:
            k += 1
        return k


def _or_end(moment: float | None) -> float:
    return math.inf if moment is None else moment


def parse(expression: str, timezone: str = "UTC", *, minimum_period: float = 60.0) -> Timing:
    """Read a schedule: a cron line or alias, or ``R[n]/start/period``. Raise a 400 (``InvalidRequest``,
    reason ``invalid_schedule``, or ``unknown_timezone`` for the zone) that says exactly what is wrong and
    how to write it right."""
    text = expression.strip()
    zone_name = _checked_zone(timezone)
    if not text:
        raise bad(f"the schedule is empty: write a cron line or a repeating interval, such as {_EXAMPLE}")
    if text[:1] in "Pp" and "/" not in text:
        raise bad(
            f"a period alone does not say when to start: write R/<start>/{text}, as in R/2026-12-01T06:00:00Z/{text}"
        )
    if text[:1] in "Rr" and "/" in text:
        timing = _interval(text, zone_name)
    else:
        line = parse_cron(text)
        timing = Timing(expression=text, kind="cron", timezone=zone_name, cron=line.text)
        timing.__dict__["line"] = line  # read once: the cached property's value
    gap = timing.shortest_gap()
    if gap < minimum_period:
        often = (
            f"runs {_span(gap)} apart at its closest"
            if timing.kind == "cron" and not timing.line.evenly_spaced()
            else f"runs every {_span(gap)}"
        )
        raise bad(f"{text!r} {often}; this site allows schedules at most once every {_span(minimum_period)}")
    return timing


def _checked_zone(name: str) -> str:
    name = name.strip()
    try:
        ZoneInfo(name)
        return name
    except (KeyError, ValueError, OSError):
        pass
    near = [known for known in available_timezones() if known.lower() == name.lower()]
    hint = f"did you mean {near[0]!r}?" if near else "write an IANA name such as 'Europe/Rome' or 'UTC'"
    raise InvalidRequest(f"unknown time zone {name!r}: {hint}", reason="unknown_timezone")


def _interval(text: str, zone_name: str) -> Timing:
    parts = text.split("/")
    if len(parts) != 3:
        raise bad(
            f"a repeating interval has three parts, R[n]/start/period (R/2026-12-01T06:00:00Z/PT6H: "
            f"every 6 hours from then, for ever), got {len(parts)}"
        )
    head, start_text, period_text = parts
    if not re.fullmatch(r"[Rr]\d*", head):
        raise bad(f"{head!r} is not a repeat count: write R to repeat for ever, or Rn for n runs (R5)")
    repeats = int(head[1:]) if len(head) > 1 else None
    if repeats == 0:
        raise bad("R0 never runs: write R1 for one run, Rn for n runs, or R to repeat for ever")
    zone = ZoneInfo(zone_name)
    if not start_text.strip():
        raise bad(
            "an interval needs its start written (Chronos' empty start, 'now', is not taken): "
            "for example R/2026-12-01T06:00:00Z/PT6H"
        )
    try:
        written = datetime.fromisoformat(start_text.strip())
    except ValueError:
        raise bad(
            f"the start {start_text!r} is not an ISO-8601 date and time: write it like 2026-12-01T06:00:00Z "
            f"(UTC), 2026-12-01T06:00:00+01:00, or 2026-12-01T06:00:00 (in the schedule's time zone)"
        ) from None
    try:  # near the years 1 and 9999, the start may not be a date in UTC or on the zone's clocks
        if written.tzinfo is None:
            local_start = written
            start = datetime.fromtimestamp(instant(written, zone), UTC)
        else:
            local_start = written.astimezone(zone).replace(tzinfo=None)
            start = written.astimezone(UTC)
        within = EARLIEST <= start.timestamp() <= LATEST
    except (OverflowError, ValueError):
        within = False
    if not within:
        raise bad(
            f"the start {start_text.strip()} is outside the times this server computes, {_ENDS}: write "
            f"a start within them, such as 2026-12-01T06:00:00Z"
        )
    timing = Timing(
        expression=text,
        kind="interval",
        timezone=zone_name,
        cron=None,
        start=start,
        period=_period(period_text),
        repeats=repeats,
        local_start=local_start,
    )
    if repeats != 1 and timing._run(1) is None:
        raise bad(
            f"the period {period_text.strip()} puts the second run past 9999-12-30 UTC, where the times "
            f"this server computes end: write a shorter period (such as PT6H or P1D), an earlier start, or "
            f"R1/{start_text.strip()}/... for a single run"
        )
    if repeats is not None and timing._run(repeats - 1) is None:
        raise bad(
            f"{head} runs would go on past 9999-12-30 UTC, where the times this server computes end: "
            f"write fewer runs, or R to repeat until then"
        )
    return timing


def _period(text: str) -> Period:
    match = _PERIOD.fullmatch(text.strip().upper())
    if match is None or not any(match.groups()) or text.strip().upper().endswith("T"):
        raise bad(
            f"{text!r} is not an ISO-8601 period: write it like PT6H, PT30M, P1D, P1W or P1DT12H (years, "
            f"months, weeks and days in whole numbers; a fraction only in hours, minutes or seconds)"
        )
    whole = [int(g or 0) for g in match.groups()[:4]]
    exact = [float((g or "0").replace(",", ".")) for g in match.groups()[4:]]
    period = Period(text.strip().upper(), *whole, *exact)
    if not math.isfinite(period.exact):  # only a hand-edited record can be this long: 1e309 seconds
        raise bad(f"the period {period.text} is too long: write a shorter one, such as P1D")
    if not period.calendar and period.exact == 0:
        raise bad(f"the period {period.text} is zero: a schedule has to move on; write PT1H for every hour")
    return period


def describe(timing: Timing) -> str:
    """The schedule in words on one line: "every day at 06:00 (Europe/Rome)", "every 6 hours from
    2026-12-01 06:00 UTC, 5 times"."""
    if timing.kind == "cron":
        return f"{line_words(timing.line)} ({timing.timezone})"
    assert timing.period is not None and timing.local_start is not None
    wall = timing.local_start
    when = wall.strftime("%Y-%m-%d %H:%M" + (":%S" if wall.second or wall.microsecond else ""))
    times = {None: "", 1: ", once"}.get(timing.repeats, f", {timing.repeats} times")
    return f"{timing.period.words()} from {when} {timing.timezone}{times}"


def _span(seconds: float) -> str:
    if seconds < 120 or seconds % 60:
        return f"{seconds:g} s"
    if seconds % 3600:
        return f"{seconds / 60:g} min"
    return f"{seconds / 3600:g} h"
