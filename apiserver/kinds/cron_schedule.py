"""Parse a CronJob schedule as robfig/cron's ParseStandard does, for its error texts.

Five fields (minute hour day-of-month month day-of-week) of numbers, names (JAN, SUN), `*`,
`?`, ranges, steps and lists, or a descriptor (@hourly … @yearly, @every <duration>).
`error()` returns the message upstream puts after `spec.schedule: Invalid value: "...": `, or "".
Called by `cronjob.py`.
"""

from __future__ import annotations

import re

_BOUNDS = ((0, 59, {}), (0, 23, {}), (1, 31, {}),
           (1, 12, {m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())}),
           (0, 6, {d: i for i, d in enumerate("sun mon tue wed thu fri sat".split())}))
_DESCRIPTORS = {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
_DURATION = re.compile(r"^([0-9]+(\.[0-9]*)?(ns|us|µs|ms|s|m|h))+$")


def _number(text: str, names: dict[str, int]) -> int | str:
    if text.lower() in names:
        return names[text.lower()]
    if not text.isdigit():
        return f"failed to parse int from {text}: strconv.Atoi: parsing {text!r}: invalid syntax".replace("'", '"')
    return int(text)


def _range(expr: str, low: int, high: int, names: dict[str, int]) -> str:
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    if len(range_and_step) > 2:
        return f"too many slashes: {expr}"
    if len(low_and_high) > 2:
        return f"too many hyphens: {expr}"
    if low_and_high[0] in ("*", "?"):
        start, end = low, high
    else:
        start_or_error = _number(low_and_high[0], names)
        if isinstance(start_or_error, str):
            return start_or_error
        start = end = start_or_error
        if len(low_and_high) == 2:
            end_or_error = _number(low_and_high[1], names)
            if isinstance(end_or_error, str):
                return end_or_error
            end = end_or_error
    if len(range_and_step) == 2:
        step = _number(range_and_step[1], {})
        if isinstance(step, str):
            return step
        if step <= 0:
            return f"step of range should be a positive number: {expr}"
    if start < low:
        return f"beginning of range ({start}) below minimum ({low}): {expr}"
    if end > high:
        return f"end of range ({end}) above maximum ({high}): {expr}"
    if start > end:
        return f"beginning of range ({start}) beyond end of range ({end}): {expr}"
    return ""


def error(schedule: str) -> str:
    text = schedule.strip()
    if text.startswith(("TZ=", "CRON_TZ=")):
        text = text.split(None, 1)[1] if " " in text else ""
    if text.startswith("@"):
        if text in _DESCRIPTORS:
            return ""
        if text.startswith("@every "):
            duration = text[len("@every "):].strip()
            return "" if _DURATION.match(duration) else f"failed to parse duration {text}: time: invalid duration {duration!r}".replace("'", '"')
        return f"unrecognized descriptor: {text}"
    fields = text.split()
    if len(fields) != 5:
        return f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]"
    for field, (low, high, names) in zip(fields, _BOUNDS):
        for expr in field.split(","):
            problem = _range(expr, low, high, names)
            if problem:
                return problem
    return ""
