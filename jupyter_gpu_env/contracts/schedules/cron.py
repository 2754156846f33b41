"""Five-field cron lines: read strictly, with errors that say how to write them, evaluated fast, and put
in words.

``minute hour day-of-month month day-of-week``, each ``*``, a number, a range ``a-b``, a step ``*/n``,
``a-b/n`` or ``a/n`` (``a`` to the end), or a comma list of those; months ``jan``-``dec`` and weekdays
``sun``-``sat`` by name too (any case), and 7 is Sunday as well as 0; the aliases ``@hourly``, ``@daily``
(``@midnight``), ``@weekly``, ``@monthly``, ``@yearly`` (``@annually``).

Days: when day-of-month and day-of-week are both restricted, a day matching either runs (Vixie cron's
rule). A field counts as unrestricted only when written ``*`` (``*/1`` and ``?`` alike): ``*/2``
restricts it, as Kubernetes' CronJob (robfig/cron) reads it, where Vixie cron would treat it as ``*``.

Times are wall-clock times in the schedule's zone, resolved as ISC cron (Debian's, cronie) resolves them:

- a time that does not exist, skipped when the clocks jump forward, runs once, at the moment they jump
  (02:30 on the spring-forward day in Europe/Rome runs at 03:00 CEST), as cron runs the jobs of a skipped
  hour right after the change: a daily job is never silently left out. (Kubernetes' CronJob, robfig/cron,
  skips them instead: its run that day does not happen.)
- a time that occurs twice when the clocks go back runs once, at the first, unless the line runs in
  every hour (``*`` or an all-hours list in the hour field): such a line follows the clock and runs in
  both passes of the repeated hour, as cronie runs its wildcard jobs, so ``0 * * * *`` stays hourly.
"""

from __future__ import annotations

import calendar
import math
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from functools import cached_property
from zoneinfo import ZoneInfo

from ...errors import InvalidRequest

ALIASES = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}
MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
WEEKDAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
# (what the field is called in a message, lowest, highest, names from the lowest on, how to write it)
FIELDS = [
    ("minute", 0, 59, [], "0-59"),
    ("hour", 0, 23, [], "0-23"),
    ("day of month", 1, 31, [], "1-31"),
    ("month", 1, 12, MONTHS, "1-12 or jan-dec"),
    ("weekday", 0, 7, WEEKDAYS, "0-7 or sun-sat, 0 and 7 both Sunday"),
]
PER = ["hour", "day", "month", "year"]
_DAY_NAMES = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
DAY = 86400
HORIZON_DAYS = 9 * 366  # 29 February can be eight years away (2096, then 2104)
_EPOCH = datetime(1970, 1, 1)


def bad(message: str) -> InvalidRequest:
    return InvalidRequest(message, reason="invalid_schedule")


def _number(text: str, index: int) -> int:
    name, low, high, names, how = FIELDS[index]
    word = text.lower()
    if word in names:
        return names.index(word) + low
    if not text.isdigit():
        raise bad(f"{name} {text!r} is not a number: write {how}")
    value = int(text)
    if not low <= value <= high:
        raise bad(f"{name} {value} is out of range {low}-{high}")
    return value


def _field(text: str, index: int) -> tuple[frozenset[int], bool]:
    """The values one field allows, and whether it is written as unrestricted (``*``)."""
    name, low, high, _, how = FIELDS[index]
    values: set[int] = set()
    star = text in ("*", "*/1") or (text == "?" and index in (2, 4))
    for item in text.split(","):
        if not item:
            raise bad(f"{name} {text!r} has an empty item: separate values with single commas, as in 0,30")
        span, slash, step_text = item.partition("/")
        if span == "*" or (span == "?" and index in (2, 4)):
            first, last = low, high
        elif "-" in span:
            a, _, b = span.partition("-")
            first, last = _number(a, index), _number(b, index)
            if first > last:
                raise bad(
                    f"{name} range {span} goes backwards: write the smaller end first "
                    f"(split one that wraps, as 22-2 into 22-23,0-2)"
                )
        else:
            first = _number(span, index)
            last = high if slash else first
        step = 1
        if slash:
            limit = high - low
            if not step_text.isdigit() or not 1 <= int(step_text) <= limit:
                once = step_text.isdigit() and int(step_text) > limit and index < 4
                raise bad(
                    f"{name} step {step_text!r} in {item!r} is not a whole number from 1 to {limit}"
                    + (f": it would run only once per {PER[index]}; write that one value" if once else "")
                )
            step = int(step_text)
        values.update(range(first, last + 1, step))
    if index == 4 and 7 in values:
        values = (values - {7}) | {0}
    return frozenset(values), star


@dataclass(frozen=True)
class CronLine:
    """A parsed cron line: the values each field allows."""

    text: str  # the five fields, single-spaced
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    days_star: bool
    weekdays_star: bool

    @cached_property
    def times(self) -> list[int]:
        """The times of day it runs, as seconds after midnight, in order."""
        return sorted(h * 3600 + m * 60 for h in self.hours for m in self.minutes)

    @property
    def every_hour(self) -> bool:
        return len(self.hours) == 24

    def runs_on(self, day: date) -> bool:
        if day.month not in self.months:
            return False
        on_day = day.day in self.days
        on_weekday = day.isoweekday() % 7 in self.weekdays
        if self.days_star or self.weekdays_star:
            return on_day and on_weekday
        return on_day or on_weekday

    def run_days(self, first: date, last: date | None = None) -> Iterator[date]:
        """The days from ``first`` (to ``last``) it runs on, skipping whole months it does not run in;
        with no ``last``, until nine years pass without one."""
        day, one = first, timedelta(days=1)
        give_up = last or _plus(first, HORIZON_DAYS)
        while day <= give_up:
            if day.month not in self.months:
                later = [m for m in sorted(self.months) if m > day.month]
                if later:
                    day = date(day.year, later[0], 1)
                elif day.year < date.max.year:
                    day = date(day.year + 1, min(self.months), 1)
                else:
                    return
                continue
            if self.runs_on(day):
                yield day
                give_up = last or _plus(day, HORIZON_DAYS)
            if day == date.max:
                return
            day += one

    def runs(self, zone: ZoneInfo, after: float) -> Iterator[float]:
        """Its due times strictly after ``after`` (Unix time), in order, until nine years pass without one."""
        times = self.times
        start = datetime.fromtimestamp(after, zone).date() - timedelta(days=1)
        last = after
        pending: list[float] = []  # a day's times that an odd transition may put after the next day's
        for day in self.run_days(start):
            found = self._instants(day, times, zone)
            if not found:
                continue
            ready = [t for t in pending if t < found[0]]
            pending = sorted({t for t in pending if t >= found[0]} | set(found))
            for moment in ready:
                if moment > last:
                    last = moment
                    yield moment
        for moment in pending:
            if moment > last:
                last = moment
                yield moment

    def _instants(self, day: date, times: list[int], zone: ZoneInfo) -> list[float]:
        midnight = datetime.combine(day, time())
        following = midnight + timedelta(days=1)
        offsets = {
            moment.replace(tzinfo=zone, fold=fold).utcoffset()
            for moment in (midnight, following)
            for fold in (0, 1)
        }
        if len(offsets) == 1:  # no transition this day, the usual case: plain arithmetic
            offset = offsets.pop()
            assert offset is not None
            base = (midnight - _EPOCH).total_seconds() - offset.total_seconds()
            return [base + s for s in times]
        found: set[float] = set()
        for seconds in times:
            wall = midnight + timedelta(seconds=seconds)
            found.add(instant(wall, zone))
            if self.every_hour:  # the second pass of a repeated hour too
                found.add(wall.replace(tzinfo=zone, fold=1).timestamp())
        return sorted(found)

    def shortest_gap(self) -> float:
        """Seconds between two consecutive runs at the closest, on ordinary days (no DST change)."""
        times = self.times
        within = min((b - a for a, b in zip(times, times[1:], strict=False)), default=float("inf"))
        overnight = times[0] + DAY - times[-1]
        if within <= overnight:
            return within
        return min(within, overnight + (self._closest_days() - 1) * DAY)

    def evenly_spaced(self) -> bool:
        times = self.times
        gaps = {b - a for a, b in zip(times, [*times[1:], times[0] + DAY], strict=False)}
        return len(gaps) == 1 and self.shortest_gap() == gaps.pop()

    def _closest_days(self) -> int:
        """The fewest days between two days it runs on, over 28 years (the calendar's weekday cycle)."""
        closest = HORIZON_DAYS
        previous: date | None = None
        for day in self.run_days(date(2001, 1, 1), date(2028, 12, 31)):
            if previous is not None:
                closest = min(closest, (day - previous).days)
                if closest == 1:
                    break
            previous = day
        return closest


def instant(wall: datetime, zone: ZoneInfo) -> float:
    """The Unix time of a wall time in ``zone``: the first when it occurs twice, the moment the clocks
    jump when it is skipped."""
    first = wall.replace(tzinfo=zone).timestamp()
    second = wall.replace(tzinfo=zone, fold=1).timestamp()
    if second >= first:
        return first  # an ordinary time, or the first of two
    # Skipped: fold=1 read it with the offset after the jump, an instant before the jump; fold=0 with the
    # one before, an instant after. The jump is the first second between them with the new offset.
    before, after = math.floor(second), math.ceil(first)
    new = datetime.fromtimestamp(after, zone).utcoffset()
    while after - before > 1:
        middle = (before + after) // 2
        if datetime.fromtimestamp(middle, zone).utcoffset() == new:
            after = middle
        else:
            before = middle
    return float(after)


def _plus(day: date, days: int) -> date:
    try:
        return day + timedelta(days=days)
    except OverflowError:
        return date.max


def parse_cron(expression: str) -> CronLine:
    """Read a cron line or alias; a 400 that says what is wrong and how to write it otherwise."""
    text = expression.strip()
    if text.startswith("@"):
        alias = text.lower()
        if alias not in ALIASES:
            raise bad(
                f"unknown alias {text}: write @hourly, @daily (or @midnight), @weekly, @monthly, "
                f"@yearly (or @annually), or a five-field line such as '0 6 * * *'"
            )
        text = ALIASES[alias]
    parts = text.split()
    if len(parts) != 5:
        hint = " (seconds and years are not taken)" if len(parts) in (6, 7) else ""
        raise bad(
            f"a cron line has five fields (minute hour day month weekday), got {len(parts)}{hint}: "
            f"for example '0 6 * * *' runs every day at 06:00"
        )
    fields = [_field(part, index) for index, part in enumerate(parts)]
    line = CronLine(
        text=" ".join(parts),
        minutes=fields[0][0],
        hours=fields[1][0],
        days=fields[2][0],
        months=fields[3][0],
        weekdays=fields[4][0],
        days_star=fields[2][1],
        weekdays_star=fields[4][1],
    )
    _check_some_day(line, expression.strip())
    return line


def _check_some_day(line: CronLine, expression: str) -> None:
    """A day of month that none of its months has, with no weekday to run on instead: never runs."""
    if not line.weekdays_star:
        return  # it runs on some weekday (or on any day of month), and every weekday comes round
    if any(day <= calendar.monthrange(2000, month)[1] for month in line.months for day in line.days):
        return
    months = [calendar.month_name[m] for m in sorted(line.months)]
    named = months[0] if len(months) == 1 else ", ".join(months[:-1]) + " and " + months[-1]
    days = ", ".join(str(d) for d in sorted(line.days))
    verb = "has" if len(months) == 1 else "have"
    raise bad(f"{expression!r} never runs: {named} {verb} no day {days}")


def line_words(line: CronLine) -> str:
    """The line in words: "every day at 06:00", "every 2 hours on weekdays"."""
    times, minutes, hours = line.times, sorted(line.minutes), sorted(line.hours)
    every_day, on_days = _days_words(line)
    contiguous = hours == list(range(hours[0], hours[-1] + 1))
    if len(times) <= 6 or (len(minutes) == 1 and not contiguous and not _step(hours, 24)):
        return f"{every_day} at {joined([_clock(t) for t in times])}"
    hour_step, minute_step = _step(hours, 24), _step(minutes, 60)
    if len(minutes) == 1 and hour_step and hour_step > 1 and hours[0] < hour_step:
        often = f"every {hour_step} hours" + (f" from {_clock(times[0])}" if times[0] else "")
    else:
        if len(minutes) == 1:
            often = "every hour"
        elif minute_step and minutes[0] < minute_step:
            often = "every minute" if minute_step == 1 else f"every {minute_step} minutes"
        else:
            often = f"at minutes {joined([str(m) for m in minutes])} of every hour"
            minute_step = None
        if line.every_hour:
            if minutes[0] and (len(minutes) == 1 or minute_step):
                often += f" at minute {minutes[0]}" if len(minutes) == 1 else f" from minute {minutes[0]}"
        elif contiguous:
            often += f" from {_clock(times[0])} to {_clock(times[-1])}"
        else:
            often += f" in hours {joined([str(h) for h in hours])}"
    return f"{often} {on_days}" if on_days else often


def _days_words(line: CronLine) -> tuple[str, str]:
    """The days it runs, as "every Monday" and as "on Mondays" ("" for every day)."""
    months = sorted(line.months)
    in_months = "" if len(months) == 12 else " in " + joined([calendar.month_name[m] for m in months])
    weekdays = sorted(line.weekdays)
    all_days, all_weekdays = len(line.days) == 31, len(weekdays) == 7
    either = not (line.days_star or line.weekdays_star)  # Vixie's rule: a day that matches either runs
    if (all_days and all_weekdays) or (either and (all_days or all_weekdays)):
        return "every day" + in_months, in_months.strip()
    if weekdays == [1, 2, 3, 4, 5]:
        every, on = "every weekday", "on weekdays"
    elif weekdays == [0, 6]:
        every, on = "every Saturday and Sunday", "at weekends"
    else:
        every = "every " + joined([_DAY_NAMES[d] for d in weekdays])
        on = "on " + joined([_DAY_NAMES[d] + "s" for d in weekdays])
    days = sorted(line.days)
    step = _step(days, 32)
    if step and step > 1 and len(days) > 3:
        ordinals = f"every {_ordinal(step)} day" + (f" from the {_ordinal(days[0])}" if days[0] > 1 else "")
    elif len(days) > 3 and days == list(range(days[0], days[-1] + 1)):
        ordinals = f"the {_ordinal(days[0])} to the {_ordinal(days[-1])}"
    else:
        ordinals = "the " + joined([_ordinal(d) for d in days])
    if either:
        both = f"on {ordinals} and {on}" + in_months
        return both, both
    if all_days:
        return every + in_months, on + in_months
    of = "every month" if len(months) == 12 else joined([calendar.month_name[m] for m in months])
    return f"on {ordinals} of {of}", f"on {ordinals} of {of}"


def _step(values: list[int], size: int) -> int | None:
    """n when ``values`` are every n-th from the first on, round the whole field."""
    if len(values) == 1:
        return None
    step = values[1] - values[0]
    return step if values == list(range(values[0], size, step)) else None


def _clock(seconds: int) -> str:
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def joined(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
