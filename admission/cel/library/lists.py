"""Kubernetes `lists` library: isSorted, sum, min, max, indexOf, lastIndexOf (and includes).

Upstream declares typed overloads per element type; here one `list(dyn)` overload each does the
work and CEL's own equality and ordering (`values.py`) decide, so `[1, 'a'].isSorted()` is the
same "no such overload" error as in cel-go. Integer sums check for int64 overflow.
Registered by `admission.cel.library`.
"""

from __future__ import annotations

import datetime
from typing import Any

from cel_expr_python import cel

from admission.cel.library import spec
from admission.cel.library import values
from admission.cel.library.failure import LibraryError

T = cel.Type
LIST = T.List(T.DYN)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _is_sorted(items: list[Any]) -> bool:
    return all(values.compare(a, b) <= 0 for a, b in zip(items, items[1:]))


def _sum(items: list[Any]) -> Any:
    if not items:
        return 0
    total = items[0]
    kind = values._kind(total)
    if kind not in ("number", "duration"):
        raise LibraryError("no such overload")
    for item in items[1:]:
        if values._kind(item) != kind or type(item) is not type(total) and kind == "number":
            raise LibraryError("no such overload")
        total = total + item
        if isinstance(total, int) and not _INT64_MIN <= total <= _INT64_MAX:
            raise LibraryError("integer overflow")
    if isinstance(total, datetime.timedelta) and abs(total) > datetime.timedelta(seconds=315576000000):
        raise LibraryError("duration out of range")
    return total


def _extreme(name: str, prefer: int):
    def pick(items: list[Any]) -> Any:
        if not items:
            raise LibraryError(f"{name} called on empty list")
        best = items[0]
        values.compare(best, best)  # an unordered kind fails even for one element
        for item in items[1:]:
            if values.compare(best, item) == prefer:
                best = item
        return best
    return pick


def _index_of(items: list[Any], item: Any) -> int:
    for i, candidate in enumerate(items):
        if values.equal(candidate, item):
            return i
    return -1


def _last_index_of(items: list[Any], item: Any) -> int:
    for i in range(len(items) - 1, -1, -1):
        if values.equal(items[i], item):
            return i
    return -1


def _member(name: str, overload: str, result: T, params: list[T], impl: object) -> tuple:
    return name, spec.overload(overload, result, [LIST, *params], is_member=True, impl=impl)


OVERLOADS = [
    _member("isSorted", "list_dyn_is_sorted_bool", T.BOOL, [], _is_sorted),
    _member("sum", "list_dyn_sum_dyn", T.DYN, [], _sum),
    _member("min", "list_dyn_min_dyn", T.DYN, [], _extreme("min", 1)),
    _member("max", "list_dyn_max_dyn", T.DYN, [], _extreme("max", -1)),
    _member("indexOf", "list_a_index_of_int", T.INT, [T.DYN], _index_of),
    _member("lastIndexOf", "list_a_last_index_of_int", T.INT, [T.DYN], _last_index_of),
]
