"""Usage from the job store's ledger: a period's report, GPU-hours allocated and used and GPU energy per
week, and as CSV; carbon and cost at the site's numbers, applied as the report is made."""

from __future__ import annotations

import csv
import datetime as dt
import io
import time

from ..gpu.energy import JOULES_PER_KWH, NO_PRICES, SitePrices
from ..models.backends import BackendUsage, UsageReport, UsageWeek, UsageWeeks
from .store import JobStore

DEFAULT_PERIOD = 7 * 24 * 3600


async def report(
    store: JobStore, start: float | None, end: float | None, prices: SitePrices = NO_PRICES
) -> UsageReport:
    """GPU-hours, CPU-hours, GPU energy and jobs per state per backend between ``start`` and ``end``; by
    default over the last 7 days."""
    end = time.time() if end is None else end
    return priced(await store.usage(end - DEFAULT_PERIOD if start is None else start, end), prices)


def priced(report: UsageReport, prices: SitePrices) -> UsageReport:
    """Each backend's and the total's CO2e and cost at the site's numbers (none where it set none)."""
    for u in [*report.backends.values(), report.total]:
        _price(u, prices)
    return report


def _price(u: BackendUsage, prices: SitePrices) -> None:
    joules = u.gpu_energy_kwh * JOULES_PER_KWH if u.gpu_hours_energy_measured or u.gpu_energy_kwh else None
    u.co2e_grams, u.cost = prices.totals(u.gpu_hours, joules)


def week_starts(weeks: int, now: float) -> list[float]:
    """The Mondays (00:00, local time) of the last ``weeks`` weeks, this one last."""
    today = dt.datetime.fromtimestamp(now).date()
    monday = today - dt.timedelta(days=today.weekday())
    return [time.mktime((monday - dt.timedelta(weeks=n)).timetuple()) for n in range(weeks - 1, -1, -1)]


async def weekly(
    store: JobStore, weeks: int, now: float | None = None, prices: SitePrices = NO_PRICES
) -> UsageWeeks:
    now = time.time() if now is None else now
    starts = week_starts(weeks, now)
    out = []
    for start, end in zip(starts, [*starts[1:], now], strict=True):
        report = priced(await store.usage(start, end, now=now), prices)
        out.append(UsageWeek(week_start=start, backends=report.backends, total=report.total))
    return UsageWeeks(weeks=out)


def as_csv(report: UsageWeeks) -> str:
    """A row per week and backend (and one for all backends): allocated, used, measured, efficiency, GPU
    energy, and CO2e and cost where the site set its numbers."""
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(
        [
            "week_start",
            "backend",
            "gpu_hours",
            "gpu_hours_used",
            "gpu_hours_measured",
            "efficiency",
            "cpu_hours",
            "gpu_energy_kwh",
            "co2e_grams",
            "cost",
            "currency",
        ]
    )
    for week in report.weeks:
        day = dt.date.fromtimestamp(week.week_start).isoformat()
        for name, u in [*sorted(week.backends.items()), ("all", week.total)]:
            eff = round(u.gpu_hours_used / u.gpu_hours_measured, 4) if u.gpu_hours_measured else ""
            w.writerow(
                [
                    day,
                    name,
                    round(u.gpu_hours, 4),
                    round(u.gpu_hours_used, 4),
                    round(u.gpu_hours_measured, 4),
                    eff,
                    round(u.cpu_hours, 4),
                    round(u.gpu_energy_kwh, 4),
                    "" if u.co2e_grams is None else round(u.co2e_grams, 1),
                    "" if u.cost is None else round(u.cost.amount, 4),
                    "" if u.cost is None else u.cost.currency or "",
                ]
            )
    return out.getvalue()
