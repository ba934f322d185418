"""CEL equality and ordering on the plain Python values that library functions receive.

cel-expr-python hands list arguments over as Python lists, so `lists` and `sets` must compare
elements as CEL does, not as Python does: `true != 1`, `1 == 1.0`, and ordering only between
values of one kind (numbers are one kind, as CrossTypeNumericComparisons makes them).
"""

from __future__ import annotations

import datetime
from typing import Any

from admission.cel.library.failure import LibraryError


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bytes):
        return "bytes"
    if isinstance(value, datetime.datetime):
        return "timestamp"
    if isinstance(value, datetime.timedelta):
        return "duration"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "map"
    return type(value).__name__


def equal(left: Any, right: Any) -> bool:
    kind = _kind(left)
    if kind != _kind(right):
        return False
    if kind == "list":
        return len(left) == len(right) and all(equal(a, b) for a, b in zip(left, right))
    if kind == "map":
        if len(left) != len(right):
            return False
        for key, value in left.items():
            match = [v for k, v in right.items() if equal(k, key)]
            if not match or not equal(value, match[0]):
                return False
        return True
    return bool(left == right)


_ORDERED = {"bool", "number", "string", "bytes", "timestamp", "duration"}


def compare(left: Any, right: Any) -> int:
    kind = _kind(left)
    if kind != _kind(right) or kind not in _ORDERED:
        raise LibraryError("no such overload")
    return (left > right) - (left < right)
