"""Quantities as the allocator computes with them: exact Decimals in, Go's canonical text out.

Parsing is the one CEL environment's (`admission.cel.library.quantity.parse`, which is
resource.ParseQuantity). `text(value, binary)` writes a computed value the way Go's
`Quantity.String()` does for the BinarySI or DecimalSI format (used for `consumedCapacity` when
step rounding makes a value no input spelled). Called by `devices.py` and `capacity.py`.
"""

from __future__ import annotations

from decimal import Decimal

from admission.cel.library import quantity as celquantity
from admission.cel.library.failure import LibraryError

ParseError = LibraryError
_BINARY = (("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10))
_DECIMAL = (("E", 18), ("P", 15), ("T", 12), ("G", 9), ("M", 6), ("k", 3), ("", 0),
            ("m", -3), ("u", -6), ("n", -9))


def parse(text: str | int | float) -> Decimal:
    """The exact value; raises ParseError with resource.ParseQuantity's message."""
    return celquantity.parse(str(text))


def is_binary(text: str) -> bool:
    """Whether a quantity was written with a binary suffix (Go keeps that format)."""
    return str(text).rstrip("0123456789").endswith("i")


def text(value: Decimal, binary: bool = False) -> str:
    """Go's canonical string for `value` in the BinarySI (`binary`) or DecimalSI format."""
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    magnitude = -value if value < 0 else value
    if binary and magnitude == magnitude.to_integral_value() and magnitude >= 1024:
        whole = int(magnitude)
        for suffix, shift in _BINARY:
            if whole % (1 << shift) == 0:
                return f"{sign}{whole >> shift}{suffix}"
        return f"{sign}{whole}"
    for suffix, exponent in _DECIMAL:
        scaled = magnitude.scaleb(-exponent)
        if scaled == scaled.to_integral_value():
            return f"{sign}{int(scaled)}{suffix}"
    return f"{sign}{int(magnitude.scaleb(9).to_integral_value(rounding='ROUND_UP'))}n"
