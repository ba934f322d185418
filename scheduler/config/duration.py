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
