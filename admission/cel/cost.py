"""CEL cost: a static estimate per program and a data-bounded check before each evaluation.

cel-expr-python has no cost tracking, so haru walks the checked tree (`checked_ast.py`) with
cel-go's cost model: identifiers and selections cost 1, has() 0, calls 1, list/map/message
literals 10/30/40, string work 0.1 per character, regexes 0.25 per pattern character, a
comprehension its range plus (condition + step) per element, an authorizer check 350,000.
`estimate()` gives (min, max) with every unknown size bounded by the 3 MiB request limit, as
cel-go does for unbounded schemas. `bound()` re-walks with the request's real data, taking list,
map and string sizes from the values a path reaches, and stops as soon as `limit` is passed.
Kubernetes counts actual cost during evaluation; haru charges this upper bound instead, so a
rule is refused only when its bound for this very request exceeds the limit. Used by
`environment.Program`; the limits and texts below are Kubernetes'.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from admission.cel.checked_ast import Node

PER_CALL_LIMIT = 1_000_000  # k8s.io/apiserver/pkg/apis/cel PerCallLimit
RUNTIME_CEL_COST_BUDGET = 10_000_000  # per validation, shared by its rules
STATIC_ESTIMATED_COST_LIMIT = 10_000_000  # CRD rule
STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000  # all rules of one CRD schema
MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024
COST_LIMIT_MESSAGE = "operation cancelled: actual cost limit exceeded"
BUDGET_EXHAUSTED_MESSAGE = (
    "validation failed due to running out of cost budget, no further validation rules will be run"
)

_SATURATED = 2**64 - 1
_LIST_CREATE, _MAP_CREATE, _STRUCT_CREATE = 10, 30, 40
_STRING_FACTOR, _REGEX_FACTOR = 0.1, 0.25
_AUTHZ_CHECK = 350_000
_CHEAP_BODY = 1_000  # bodies up to this static cost are multiplied out instead of walked
# Functions whose cost grows with the receiver's (or first argument's) length.
_STRING_WALKERS = {
    "contains", "startsWith", "endsWith", "lowerAscii", "upperAscii", "trim", "replace",
    "split", "join", "substring", "charAt", "indexOf", "lastIndexOf", "reverse", "format",
    "quote", "url", "isURL", "ip", "isIP", "ip.isCanonical", "cidr", "isCIDR", "quantity",
    "isQuantity", "semver", "isSemver", "jsonpatch.escapeKey", "string", "bytes",
    "base64.encode", "base64.decode",
}
_LIST_WALKERS = {"isSorted", "sum", "min", "max", "indexOf", "lastIndexOf", "@in"}
_REGEXES = {"matches", "find", "findAll"}
_LOGICAL = {"_&&_", "_||_"}


class OverLimit(Exception):
    """Raised inside `bound()` as soon as the running cost passes the limit."""


@dataclass(frozen=True)
class CostEstimate:
    min: int
    max: int


@dataclass(frozen=True)
class _Value:
    """What the walk knows of a value: the value itself, or only an upper bound on its size."""

    known: bool
    value: Any = None
    size: int = 0

    def size_bound(self) -> int:
        if not self.known:
            return self.size
        value = self.value
        if isinstance(value, (str, bytes, list, dict, tuple)):
            return len(value)
        return 0

    def child(self, key: Any) -> "_Value":
        if self.known:
            if isinstance(self.value, dict):
                return _Value(True, self.value.get(key))
            return _Value(True, None)
        return self


def _add(*costs: float) -> int:
    total = sum(costs)
    return _SATURATED if total >= _SATURATED else int(total)


def _mul(count: int, cost: float) -> int:
    return _add(count * cost) if count and cost else 0


class _Walk:
    def __init__(self, data: dict[str, Any] | None, limit: int | None):
        self.data = data
        self.limit = limit
        self.spent = 0  # running max cost, for the early stop
        self.unknown = _Value(False, size=MAX_REQUEST_SIZE_BYTES)

    def charge(self, amount: int) -> None:
        if self.limit is not None:
            self.spent = _add(self.spent, amount)
            if self.spent > self.limit:
                raise OverLimit

    def walk(self, node: Node, scope: dict[str, _Value]) -> tuple[int, int, _Value]:
        kind = node.kind
        if kind == "const":
            return 0, 0, _Value(True, node.value)
        if kind == "ident":
            self.charge(1)
            if node.name in scope:
                return 1, 1, scope[node.name]
            if self.data is not None and node.name in self.data:
                return 1, 1, _Value(True, self.data[node.name])
            return 1, 1, self.unknown
        if kind == "select":
            lo, hi, operand = self.walk(node.target, scope)  # type: ignore[arg-type]
            if node.value:  # has(): free, as Kubernetes configures cel-go
                return lo, hi, _Value(True, False)
            self.charge(1)
            return lo + 1, _add(hi, 1), operand.child(node.name)
        if kind in ("list", "map", "struct"):
            base = {"list": _LIST_CREATE, "map": _MAP_CREATE, "struct": _STRUCT_CREATE}[kind]
            self.charge(base)
            lo, hi, parts = base, base, []
            for child in node.args:
                c_lo, c_hi, value = self.walk(child, scope)
                lo, hi = lo + c_lo, _add(hi, c_hi)
                parts.append(value)
            if kind == "list" and all(p.known for p in parts):
                return lo, hi, _Value(True, [p.value for p in parts])
            return lo, hi, _Value(False, size=len(node.args))
        if kind == "comprehension":
            return self.comprehension(node, scope)
        return self.call(node, scope)

    def comprehension(self, node: Node, scope: dict[str, _Value]) -> tuple[int, int, _Value]:
        r_lo, r_hi, rng = self.walk(node.iter_range, scope)  # type: ignore[arg-type]
        i_lo, i_hi, init = self.walk(node.accu_init, scope)  # type: ignore[arg-type]
        inner = dict(scope)
        size = rng.size_bound()
        inner[node.accu_var] = _Value(False, size=max(size, init.size_bound()))
        lo, hi = r_lo + i_lo, _add(r_hi, i_hi)
        if size:
            elements: list[Any] | None = None
            if rng.known and isinstance(rng.value, (list, dict)):
                elements = list(rng.value)
            inner[node.name] = _Value(False, size=rng.size_bound()) if elements is None else rng
            saved, self.spent = self.spent, 0
            limit, self.limit = self.limit, None
            _, body_hi = self.body(node, inner, self.unknown_element(rng))
            self.spent, self.limit = saved, limit
            if elements is None or body_hi <= _CHEAP_BODY:
                per_element = body_hi
                self.charge(_mul(size, per_element))
                hi = _add(hi, _mul(size, per_element))
            else:
                for element in elements:
                    _, element_hi = self.body(node, inner, _Value(True, element))
                    hi = _add(hi, element_hi)
        inner.pop(node.name, None)
        res_lo, res_hi, _ = self.walk(node.result, inner)  # type: ignore[arg-type]
        return lo + res_lo, _add(hi, res_hi), _Value(False, size=size)

    def unknown_element(self, rng: _Value) -> _Value:
        return _Value(False, size=rng.size_bound()) if not rng.known else self.unknown

    def body(self, node: Node, scope: dict[str, _Value], element: _Value) -> tuple[int, int]:
        scope[node.name] = element
        c_lo, c_hi, _ = self.walk(node.loop_condition, scope)  # type: ignore[arg-type]
        s_lo, s_hi, _ = self.walk(node.loop_step, scope)  # type: ignore[arg-type]
        return c_lo + s_lo, _add(c_hi, s_hi)

    def call(self, node: Node, scope: dict[str, _Value]) -> tuple[int, int, _Value]:
        name = node.name
        operands = ([node.target] if node.target is not None else []) + node.args
        walked = [self.walk(operand, scope) for operand in operands]
        if name in _LOGICAL:
            lo = walked[0][0]
            hi = _add(*(w[1] for w in walked))
            return lo, hi, _Value(True, None)
        if name == "_?_:_":
            lo = walked[0][0] + min(walked[1][0], walked[2][0])
            hi = _add(walked[0][1], max(walked[1][1], walked[2][1]))
            return lo, hi, _Value(False, size=max(walked[1][2].size_bound(),
                                                    walked[2][2].size_bound()))
        lo = sum(w[0] for w in walked)
        hi = _add(*(w[1] for w in walked))
        sizes = [w[2].size_bound() for w in walked]
        own = self.own_cost(name, sizes)
        self.charge(own)
        return lo + 1, _add(hi, own), _Value(False, size=max(sizes, default=0))

    @staticmethod
    def own_cost(name: str, sizes: list[int]) -> int:
        first = sizes[0] if sizes else 0
        if name == "check":
            return _AUTHZ_CHECK
        if name in _REGEXES and len(sizes) >= 2:
            return _add(1, math.ceil(first * _STRING_FACTOR) * math.ceil(sizes[1] * _REGEX_FACTOR))
        if name in _LIST_WALKERS:
            return _add(1, sizes[-1] if name == "@in" else first)
        if name.startswith("sets."):
            return _add(1, _mul(sizes[0], sizes[1]) if len(sizes) == 2 else 0)
        if name in _STRING_WALKERS or name in ("_==_", "_!=_", "_+_"):
            return _add(1, math.ceil(sum(sizes) * _STRING_FACTOR))
        return 1


def estimate(root: Node) -> CostEstimate:
    """Static (min, max) cost with every unknown size bounded by the maximum request size."""
    lo, hi, _ = _Walk(None, None).walk(root, {})
    return CostEstimate(min(lo, _SATURATED), hi)


def bound(root: Node, data: dict[str, Any], limit: int) -> int:
    """Upper bound of this evaluation's cost with `data`; raises OverLimit once past `limit`."""
    walk = _Walk(data, limit)
    _, hi, _ = walk.walk(root, {})
    if hi > limit:
        raise OverLimit
    return hi
