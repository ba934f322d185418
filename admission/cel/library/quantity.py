"""Kubernetes `quantity` library: `quantity()`, `isQuantity()` and the Quantity methods.

Parsing follows resource.ParseQuantity (apimachinery): sign, digits, then a decimal exponent
(`e3`), a decimal SI suffix or a binary suffix; values finer than nano round up. Arithmetic is
exact (Python `Decimal` with enough precision), as inf.Dec is upstream. Registered by
`admission.cel.library`; values are `kube_types.Quantity` messages holding canonical text.
"""

from __future__ import annotations

import decimal
import functools
import re
from decimal import Decimal

from cel_expr_python import cel

from admission.cel.library import spec
from admission.cel import kube_types
from admission.cel.library.failure import LibraryError

T = cel.Type
Q = kube_types.QUANTITY

# resource.ErrFormatWrong / ErrSuffix / ErrNumeric, verbatim.
FORMAT_WRONG = (
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
SUFFIX_WRONG = "unable to parse quantity's suffix"

_EXACT = decimal.Context(prec=200, rounding=decimal.ROUND_HALF_EVEN, Emax=10**6, Emin=-(10**6))
_NANO = Decimal("1e-9")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

_DECIMAL_SUFFIXES = {
    "": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18,
}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_EXPONENT = re.compile(r"[eE][-+]?[0-9]+")


@functools.lru_cache(maxsize=4096)
def parse(text: str) -> Decimal:
    """The exact value of a quantity string, or LibraryError with resource.ParseQuantity's text."""
    if not text:
        raise LibraryError(FORMAT_WRONG)
    pos = 0
    if text[0] in "+-":
        pos = 1
    start = pos
    seen_dot = False
    while pos < len(text) and (text[pos].isdigit() and text[pos].isascii() or text[pos] == "."):
        if text[pos] == ".":
            if seen_dot:
                raise LibraryError(FORMAT_WRONG)
            seen_dot = True
        pos += 1
    number = text[start:pos]
    if not number or number == ".":
        raise LibraryError(FORMAT_WRONG)
    suffix = text[pos:]
    if not re.fullmatch(r"[eEinumkKMGTP]*[-+]?[0-9]*", suffix):
        raise LibraryError(FORMAT_WRONG)
    value = Decimal(number if number[0] != "." else "0" + number)
    if text[0] == "-":
        value = -value
    if suffix in _DECIMAL_SUFFIXES:
        value = value.scaleb(_DECIMAL_SUFFIXES[suffix], _EXACT)
    elif suffix in _BINARY_SUFFIXES:
        value = _EXACT.multiply(value, Decimal(2 ** _BINARY_SUFFIXES[suffix]))
    elif _EXPONENT.fullmatch(suffix):
        value = value.scaleb(int(suffix[1:]), _EXACT)
    else:
        raise LibraryError(SUFFIX_WRONG)
    return _round_up_to_nano(value)


def _round_up_to_nano(value: Decimal) -> Decimal:
    # Quantities carry at most nano precision; finer values round away from zero (inf.RoundUp).
    if value.as_tuple().exponent >= -9:  # type: ignore[operator]
        return value
    return value.quantize(_NANO, rounding=decimal.ROUND_UP, context=_EXACT)


def canonical_text(value: Decimal) -> str:
    """One text per value, so message equality is numeric equality ("1.5e3" -> "1500")."""
    if value == 0:
        return "0"
    return format(value.normalize(_EXACT), "f")


def make(value: Decimal) -> object:
    return kube_types.Quantity(decimal=canonical_text(value))


def value_of(message: object) -> Decimal:
    return Decimal(message.decimal)  # type: ignore[attr-defined]


def from_string(text: str) -> object:
    """A Quantity message for `text` (for activations, e.g. DRA device capacities)."""
    return make(parse(text))


def _is_quantity(text: str) -> bool:
    try:
        parse(text)
    except LibraryError:
        return False
    return True


def _as_integer(message: object) -> int:
    value = value_of(message)
    if value != value.to_integral_value() or not _INT64_MIN <= value <= _INT64_MAX:
        raise LibraryError("cannot convert value to integer")
    return int(value)


def _is_integer(message: object) -> bool:
    value = value_of(message)
    return value == value.to_integral_value() and _INT64_MIN <= value <= _INT64_MAX


def _as_float(message: object) -> float:
    return float(value_of(message))  # float() gives ±inf beyond the double range, as upstream


def _sign(message: object) -> int:
    value = value_of(message)
    return (value > 0) - (value < 0)


def _compare(left: object, right: object) -> int:
    a, b = value_of(left), value_of(right)
    return (a > b) - (a < b)


def _add(left: object, right: object) -> object:
    return make(_EXACT.add(value_of(left), value_of(right)))


def _sub(left: object, right: object) -> object:
    return make(_EXACT.subtract(value_of(left), value_of(right)))


def _add_int(left: object, right: int) -> object:
    return make(_EXACT.add(value_of(left), Decimal(right)))


def _sub_int(left: object, right: int) -> object:
    return make(_EXACT.subtract(value_of(left), Decimal(right)))


def _mul_int(left: object, right: int) -> object:
    return make(_EXACT.multiply(value_of(left), Decimal(right)))


def _member(name: str, overload: str, result: T, params: list[T], impl: object) -> tuple:
    return name, spec.overload(overload, result, params, is_member=True, impl=impl)


OVERLOADS = [
    ("quantity", spec.overload("string_to_quantity", Q, [T.STRING], impl=from_string)),
    ("isQuantity", spec.overload("is_quantity_string", T.BOOL, [T.STRING], impl=_is_quantity)),
    _member("sign", "quantity_sign", T.INT, [Q], _sign),
    _member("isInteger", "quantity_is_integer", T.BOOL, [Q], _is_integer),
    _member("asInteger", "quantity_get_int", T.INT, [Q], _as_integer),
    _member("asApproximateFloat", "quantity_get_float", T.DOUBLE, [Q], _as_float),
    _member("mul", "quantity_multiply_int", Q, [Q, T.INT], _mul_int),
    _member("add", "quantity_add", Q, [Q, Q], _add),
    _member("add", "quantity_add_int", Q, [Q, T.INT], _add_int),
    _member("sub", "quantity_sub", Q, [Q, Q], _sub),
    _member("sub", "quantity_sub_int", Q, [Q, T.INT], _sub_int),
    _member("compareTo", "quantity_compare_to", T.INT, [Q, Q], _compare),
    _member("isGreaterThan", "quantity_is_greater_than", T.BOOL, [Q, Q],
            lambda a, b: _compare(a, b) == 1),
    _member("isLessThan", "quantity_is_less_than", T.BOOL, [Q, Q],
            lambda a, b: _compare(a, b) == -1),
]
