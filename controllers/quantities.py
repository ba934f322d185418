"""API quantities as the HPA controller reads and writes them: milli-units in, DecimalSI text out.

`milli(text)` is `resource.Quantity.MilliValue()` (rounded up); `from_milli(n)` is
`resource.NewMilliQuantity(n, DecimalSI).String()` ("500m", "3", "1500", "2k"). Controllers may
not import the API server's quantity code (`.importlinter`), so this is the small part they need.
Used by `hpa_metrics.py` and `horizontal_pod_autoscaler.py`.
"""

from __future__ import annotations

import re
from decimal import ROUND_CEILING, Decimal, InvalidOperation

_FORM = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?)$")
_SCALE = {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), None: Decimal(1), "k": Decimal("1e3"),
          "M": Decimal("1e6"), "G": Decimal("1e9"), "T": Decimal("1e12"), "P": Decimal("1e15"), "E": Decimal("1e18"),
          "Ki": Decimal(2**10), "Mi": Decimal(2**20), "Gi": Decimal(2**30), "Ti": Decimal(2**40),
          "Pi": Decimal(2**50), "Ei": Decimal(2**60)}
_SUFFIXES = ((18, "E"), (15, "P"), (12, "T"), (9, "G"), (6, "M"), (3, "k"), (0, ""))


def parse(text: object) -> Decimal:
    """The value of a quantity (a string or a JSON number); ValueError when it is none."""
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise ValueError(f"quantities must be strings or numbers, not {type(text).__name__}")
    match = _FORM.match(str(text).strip())
    if match is None:
        raise ValueError(f"quantities must match the regular expression "
                         f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {text!r}")
    number, exponent, suffix = match.groups()
    try:
        value = Decimal(number)
        return value.scaleb(int(exponent[1:])) if exponent else value * _SCALE[suffix]
    except InvalidOperation:
        raise ValueError(f"bad quantity {text!r}") from None


def milli(text: object) -> int:
    return int((parse(text) * 1000).to_integral_value(rounding=ROUND_CEILING))


def from_milli(value: int) -> str:
    if value % 1000:
        return f"{value}m"
    units = value // 1000
    if units == 0:
        return "0"
    for exponent, suffix in _SUFFIXES:
        if units % 10**exponent == 0:
            return f"{units // 10**exponent}{suffix}"
    return str(units)
