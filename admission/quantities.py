"""Resource quantities as the built-in plugins use them: exact values that print as Go prints them.

A `Quantity` is an exact `Decimal` plus the format its text was written in (DecimalSI,
BinarySI, DecimalExponent), because Go's `Quantity.String()` keeps that format while
canonicalizing the number: "0.5" prints as "500m", "1024Mi" as "1Gi", "1e3" stays "1e3".
Sums keep the format of the left operand, as `Quantity.Add` does. Parsing is the CEL quantity
library's (one parser); LimitRanger and ResourceQuota (`plugins/`) format their messages here.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Mapping, NamedTuple

from admission.cel.library import quantity as cel_quantity
from admission.cel.library.failure import LibraryError

DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT = "DecimalSI", "BinarySI", "DecimalExponent"
_DECIMAL_SUFFIX_BY_EXPONENT = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_SUFFIXES = (("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10))


class Quantity(NamedTuple):
    value: Decimal
    format: str = DECIMAL_SI

    def __add__(self, other: object) -> "Quantity":
        assert isinstance(other, Quantity)
        return Quantity(self.value + other.value, self.format)

    def __sub__(self, other: object) -> "Quantity":
        assert isinstance(other, Quantity)
        return Quantity(self.value - other.value, self.format)

    def __str__(self) -> str:
        return format_quantity(self.value, self.format)


ZERO = Quantity(Decimal(0))


def parse(text: Any) -> Quantity:
    """A quantity from its API text (or a JSON number); ValueError with upstream's text."""
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise ValueError(cel_quantity.FORMAT_WRONG)
    raw = str(text)
    try:
        value = cel_quantity.parse(raw)
    except LibraryError as err:
        raise ValueError(str(err)) from None
    suffix = raw.lstrip("+-0123456789.")
    if suffix.endswith("i"):
        return Quantity(value, BINARY_SI)
    if suffix[:1] in ("e", "E"):
        return Quantity(value, DECIMAL_EXPONENT)
    return Quantity(value, DECIMAL_SI)


def parse_or_none(text: Any) -> Quantity | None:
    try:
        return parse(text)
    except ValueError:
        return None


def resource_list(values: Mapping[str, Any] | None) -> dict[str, Quantity]:
    """A ResourceList (`{"cpu": "100m"}`) as quantities; unparsable entries are left out."""
    result: dict[str, Quantity] = {}
    for name, text in (values or {}).items():
        parsed = parse_or_none(text)
        if parsed is not None:
            result[name] = parsed
    return result


def _scaled_integer(value: Decimal, exponent: int) -> int | None:
    scaled = value.scaleb(-exponent)
    return int(scaled) if scaled == scaled.to_integral_value() else None


def format_quantity(value: Decimal, fmt: str = DECIMAL_SI) -> str:
    """Go's `Quantity.String()`: the largest suffix that keeps the mantissa an integer."""
    if value == 0:
        return "0"
    if fmt == BINARY_SI and abs(value) >= 1024 and value == value.to_integral_value():
        number = int(value)
        for suffix, shift in _BINARY_SUFFIXES:
            if number % (1 << shift) == 0:
                return f"{number >> shift}{suffix}"
        return str(number)
    for exponent in (18, 15, 12, 9, 6, 3, 0, -3, -6, -9):
        mantissa = _scaled_integer(value, exponent)
        if mantissa is not None:
            if fmt == DECIMAL_EXPONENT:
                return f"{mantissa}e{exponent}" if exponent else str(mantissa)
            return f"{mantissa}{_DECIMAL_SUFFIX_BY_EXPONENT[exponent]}"
    # Finer than nano cannot happen after parsing (values round up to nano).
    return f"{int(value.scaleb(9).to_integral_value())}n"


def milli_value(q: Quantity) -> int:
    """`Quantity.MilliValue()`: thousandths, rounded up as Go rounds."""
    scaled = q.value.scaleb(3)
    integral = int(scaled.to_integral_value(rounding="ROUND_CEILING"))
    return integral
