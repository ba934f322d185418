"""CronJob schedules: parse one as robfig/cron's ParseStandard does and find the times it fires.

Five fields (minute hour day-of-month month day-of-week; numbers, JAN/SUN names, `*`, `?`,
ranges, steps, lists) or a descriptor (@yearly/@annually, @monthly, @weekly, @daily/@midnight,
@hourly, @every <duration>), optionally after `CRON_TZ=<zone>` or `TZ=<zone>`. Day of month and
day of week are ORed unless either is a bare `*`/`?`, as in robfig. Times are computed on the
wall clock of the zone (zoneinfo); a wall time a DST jump skips does not fire. Pure; used by
`cron_job.py` (the API server validates with its own copy: controllers may not import it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo

_NAMES = ({}, {}, {}, {m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())},
          {d: i for i, d in enumerate("sun mon tue wed thu fri sat".split())})
_BOUNDS = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 6))
_DESCRIPTORS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
                "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]*)?)(ns|us|µs|ms|s|m|h)")
YEARS_AHEAD = 5  # robfig gives up looking after five years (a 30 February never comes)


class ScheduleError(ValueError):
    """The schedule does not parse; the text is robfig's."""


@dataclass(frozen=True)
class Schedule:
    fields: tuple[frozenset[int], ...] = ()
    dom_star: bool = False
    dow_star: bool = False
    every: float | None = None  # @every: a constant delay in seconds
    zone: tzinfo = timezone.utc

    def next_after(self, when: datetime) -> datetime | None:
        """The first firing strictly after `when` (an aware datetime), or None within five years."""
        if self.every is not None:
            return when.replace(microsecond=0) + timedelta(seconds=max(1.0, self.every))
        local = when.astimezone(self.zone).replace(second=0, microsecond=0, tzinfo=None) + timedelta(minutes=1)
        minutes, hours, doms, months, dows = self.fields
        limit = local.year + YEARS_AHEAD
        while local.year <= limit:
            if local.month not in months:
                local = (local.replace(day=1, hour=0, minute=0) + timedelta(days=32)).replace(day=1)
                continue
            if not self._day_matches(local):
                local = local.replace(hour=0, minute=0) + timedelta(days=1)
                continue
            if local.hour not in hours:
                local = local.replace(minute=0) + timedelta(hours=1)
                continue
            if local.minute not in minutes:
                local += timedelta(minutes=1)
                continue
            aware = local.replace(tzinfo=self.zone)
            if aware.astimezone(timezone.utc).astimezone(self.zone).replace(tzinfo=None) != local:
                local += timedelta(minutes=1)  # inside a DST gap: this wall time does not exist
                continue
            return aware
        return None

    def _day_matches(self, local: datetime) -> bool:
        dom = local.day in self.fields[2]
        dow = (local.isoweekday() % 7) in self.fields[4]
        if self.dom_star or self.dow_star:
            return dom and dow
        return dom or dow


def _number(text: str, names: dict[str, int]) -> int:
    if text.lower() in names:
        return names[text.lower()]
    if not text.isdigit():
        raise ScheduleError(f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": invalid syntax')
    return int(text)


def _range(expr: str, low: int, high: int, names: dict[str, int]) -> tuple[set[int], bool]:
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1
    star = False
    if low_and_high[0] in ("*", "?"):
        start, end, star = low, high, True
    else:
        start = _number(low_and_high[0], names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _number(low_and_high[1], names)
        else:
            raise ScheduleError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _number(range_and_step[1], {})
        if single:
            end = high  # "N/step" means "N-max/step"
        if step > 1:
            star = False
    else:
        raise ScheduleError(f"too many slashes: {expr}")
    if start < low:
        raise ScheduleError(f"beginning of range ({start}) below minimum ({low}): {expr}")
    if end > high:
        raise ScheduleError(f"end of range ({end}) above maximum ({high}): {expr}")
    if start > end:
        raise ScheduleError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise ScheduleError(f"step of range should be a positive number: {expr}")
    return set(range(start, end + 1, step)), star


def _field(text: str, position: int) -> tuple[frozenset[int], bool]:
    low, high = _BOUNDS[position]
    values: set[int] = set()
    star = False
    for part in text.split(","):
        found, part_star = _range(part, low, high, _NAMES[position])
        values |= found
        star = star or part_star
    return frozenset(values), star


def _duration(text: str) -> float:
    if not text or _DURATION_PART.sub("", text):
        raise ScheduleError(f'failed to parse duration @every {text}: time: invalid duration "{text}"')
    return sum(float(number) * _UNITS[unit] for number, unit in _DURATION_PART.findall(text))


def zone_named(name: str) -> tzinfo:
    if name in ("", "UTC"):
        return timezone.utc
    try:
        return ZoneInfo(name)
    except (ValueError, OSError, KeyError) as exc:
        raise ScheduleError(f"provided bad location {name}: unknown time zone {name}") from exc


def parse(text: str, zone: str | None = None) -> Schedule:
    """A schedule, in `zone` unless the text names its own with CRON_TZ= or TZ=."""
    spec = text.strip()
    where = zone_named(zone or "")
    if spec.startswith(("CRON_TZ=", "TZ=")):
        name, _, spec = spec.partition(" ")
        where = zone_named(name.split("=", 1)[1])
        spec = spec.strip()
    if spec.startswith("@every "):
        return Schedule(every=_duration(spec[len("@every "):].strip()), zone=where)
    if spec.startswith("@"):
        if spec not in _DESCRIPTORS:
            raise ScheduleError(f"unrecognized descriptor: {spec}")
        spec = _DESCRIPTORS[spec]
    fields = spec.split()
    if len(fields) != 5:
        raise ScheduleError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    parsed = [_field(f, i) for i, f in enumerate(fields)]
    return Schedule(tuple(values for values, _ in parsed), dom_star=parsed[2][1], dow_star=parsed[4][1], zone=where)
