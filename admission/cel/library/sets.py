"""cel-go's `sets` extension, which Kubernetes enables: sets.contains, sets.equivalent, sets.intersects.

cel-expr-python does not ship it, so it is written here on CEL equality (`values.py`).
Registered by `admission.cel.library`.
"""

from __future__ import annotations

from typing import Any

from cel_expr_python import cel

from admission.cel.library import spec
from admission.cel.library import values

T = cel.Type
LIST = T.List(T.DYN)


def _has(items: list[Any], item: Any) -> bool:
    return any(values.equal(candidate, item) for candidate in items)


def _contains(left: list[Any], right: list[Any]) -> bool:
    return all(_has(left, item) for item in right)


def _equivalent(left: list[Any], right: list[Any]) -> bool:
    return _contains(left, right) and _contains(right, left)


def _intersects(left: list[Any], right: list[Any]) -> bool:
    return any(_has(left, item) for item in right)


OVERLOADS = [
    ("sets.contains", spec.overload("list_sets_contains_list", T.BOOL, [LIST, LIST],
                                   impl=_contains)),
    ("sets.equivalent", spec.overload("list_sets_equivalent_list", T.BOOL, [LIST, LIST],
                                     impl=_equivalent)),
    ("sets.intersects", spec.overload("list_sets_intersects_list", T.BOOL, [LIST, LIST],
                                     impl=_intersects)),
]
