"""Go's `time.ParseDuration` ("1m30s", "500ms", "10s"), as metav1.Duration fields are written.

`decoding.py` checks every duration field with it, and `plugin_args.py` turns DynamicResourcesArgs'
filterTimeout and bindingTimeout into seconds. The error text is Go's (`time: invalid duration "x"`).
"""

from __future__ import annotations

import re

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse(text: str) -> float:
    """Seconds; raises ValueError with Go's message."""
    body, sign = text, 1.0
    if body[:1] in "+-":
        sign, body = (-1.0 if body[0] == "-" else 1.0), body[1:]
    if body == "0":
        return 0.0
    if not body:
        raise ValueError(f'time: invalid duration "{text}"')
    total, pos = 0.0, 0
    while pos < len(body):
        match = _PART.match(body, pos)
        if match is None:
            if re.match(r"\d+\.?\d*$|\.\d+$", body[pos:]):
                raise ValueError(f'time: missing unit in duration "{text}"')
            raise ValueError(f'time: invalid duration "{text}"')
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    return sign * total


def format(seconds: float) -> str:
    """Go's Duration.String(): "0s", "500ms", "1.5s", "5m0s", "1h2m3s"."""
    if seconds == 0:
        return "0s"
    sign, seconds = ("-" if seconds < 0 else ""), abs(seconds)
    if seconds < 1:
        for unit, scale in (("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
            if seconds >= scale:
                return sign + _trim(seconds / scale) + unit
        return sign + _trim(seconds / 1e-9) + "ns"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    out = f"{int(hours)}h" if hours else ""
    if hours or minutes:
        out += f"{int(minutes)}m"
    return sign + out + _trim(secs) + "s"


def _trim(value: float) -> str:
    text = f"{value:.9f}".rstrip("0").rstrip(".")
    return text or "0"
