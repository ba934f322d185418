"""CEL cost: a static estimate per program and a data-bounded check before each evaluation.

cel-expr-python has no cost tracking, so haru walks the checked tree (`checked_ast.py`) with
cel-go's cost model: identifiers and selections cost 1, has() 0, calls 1, list/map/message
literals 10/30/40, string work 0.1 per character, regexes 0.25 per pattern character, a
comprehension its range plus (condition + step) per element, an authorizer check 350,000.
`estimate()` gives (min, max) with every unknown size bounded by the 3 MiB request limit, as
cel-go does for unbounded schemas. `compile_bound()` builds, once per program, a function that
re-walks with the request's real data, taking list, map and string sizes from the values a path
reaches, and stops as soon as the limit is passed. `sized_bound()` runs that function on
stand-ins for data whose every string, list and map is at most N long: a rough bound that
depends on the request only through its size, so it is remembered per size (see
`environment.Program._charge`).
Kubernetes counts actual cost during evaluation; haru charges this upper bound instead, so a
rule is refused only when its bound for this very request exceeds the limit. Used by
`environment.Program`; the limits and texts below are Kubernetes'.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

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

SATURATED = 2**64 - 1
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
_TYPE_BLIND = {"_==_", "_!=_", "_+_"}


class OverLimit(Exception):
    """Raised by a compiled bound as soon as the running cost passes the limit."""


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
    return SATURATED if total >= SATURATED else int(total)


def _mul(count: int, cost: float) -> int:
    return _add(count * cost) if count and cost else 0


class _Walk:
    """The static estimator: constants are known, every variable is of unknown size."""

    def __init__(self) -> None:
        self.unknown = _Value(False, size=MAX_REQUEST_SIZE_BYTES)

    def walk(self, node: Node, scope: dict[str, _Value]) -> tuple[int, int, _Value]:
        kind = node.kind
        if kind == "const":
            return 0, 0, _Value(True, node.value)
        if kind == "ident":
            return 1, 1, scope.get(node.name, self.unknown)
        if kind == "select":
            lo, hi, operand = self.walk(node.target, scope)  # type: ignore[arg-type]
            if node.value:  # has(): free, as Kubernetes configures cel-go
                return lo, hi, _Value(True, False)
            return lo + 1, _add(hi, 1), operand.child(node.name)
        if kind in ("list", "map", "struct"):
            base = {"list": _LIST_CREATE, "map": _MAP_CREATE, "struct": _STRUCT_CREATE}[kind]
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
            elements = list(rng.value) if rng.known and isinstance(rng.value, (list, dict)) else None
            if elements is None:
                _, body_hi = self.body(node, inner, _Value(False, size=size))
                hi = _add(hi, _mul(size, body_hi))
            else:  # a literal range: each element's own cost
                for element in elements:
                    hi = _add(hi, self.body(node, inner, _Value(True, element))[1])
        inner.pop(node.name, None)
        res_lo, res_hi, _ = self.walk(node.result, inner)  # type: ignore[arg-type]
        return lo + res_lo, _add(hi, res_hi), _Value(False, size=size)

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
        sizes = [w[2].size_bound() if w[2].known else -1 for w in walked]
        own = self.own_cost(name, sizes)
        sizes = [self.unknown.size if size < 0 else size for size in sizes]
        return lo + 1, _add(hi, own), _Value(False, size=max(sizes, default=0))

    @staticmethod
    def own_cost(name: str, sizes: list[int]) -> int:
        """The call's own cost from its operands' sizes; -1 is a size nobody knows."""
        if name in _TYPE_BLIND:
            # cel-go charges these by length only when the checked type is a string, bytes or
            # list; on dyn operands (all of haru's object data) it charges 1.
            sizes = [max(size, 0) for size in sizes]
        else:
            sizes = [MAX_REQUEST_SIZE_BYTES if size < 0 else size for size in sizes]
        first = sizes[0] if sizes else 0
        if name == "check":
            return _AUTHZ_CHECK
        if name in _REGEXES and len(sizes) >= 2:
            return _add(1, math.ceil(first * _STRING_FACTOR) * math.ceil(sizes[1] * _REGEX_FACTOR))
        if name in _LIST_WALKERS:
            return _add(1, sizes[-1] if name == "@in" else first)
        if name.startswith("sets."):
            return _add(1, _mul(sizes[0], sizes[1]) if len(sizes) == 2 else 0)
        if name in _STRING_WALKERS or name in _TYPE_BLIND:
            return _add(1, math.ceil(sum(sizes) * _STRING_FACTOR))
        return 1


def estimate(root: Node) -> CostEstimate:
    """Static (min, max) cost with every unknown size bounded by the maximum request size."""
    lo, hi, _ = _Walk().walk(root, {})
    return CostEstimate(min(lo, SATURATED), hi)


_UNKNOWN = object()  # a value the bound does not know (a function result, a missing variable)


class _Sized:
    """Stands for any data whose strings, lists and maps, at every depth, are at most `size` long.

    A bound walked over these instead of the real values is at least the bound of any real data
    that small: a select gives the same stand-in (a part is no longer than the whole), and a
    comprehension costs `size` times its body on one stand-in element."""

    __slots__ = ("size",)

    def __init__(self, size: int):
        self.size = size


def _size(value: Any) -> int:
    if value is _UNKNOWN:
        return MAX_REQUEST_SIZE_BYTES
    if isinstance(value, (str, bytes, list, dict)):
        return len(value)
    if type(value) is _Sized:
        return value.size
    return 0


Bound = Callable[[dict[str, Any]], tuple[int, Any]]


def compile_bound(root: Node, data_names: frozenset[str]) -> Callable[[dict[str, Any], int], int]:
    """A function (variables, limit) -> this request's cost bound, raising OverLimit past limit.

    The tree is turned into closures once, and each comprehension's body is estimated
    statically at this point: a body whose cost does not grow with its data (at most
    `_CHEAP_BODY`) is charged as count × static cost; only the others are walked per element.
    """
    walk = _Walk()
    limit_now = [SATURATED]  # the limit of the evaluation in progress, for early stops

    def build(node: Node, loop_vars: frozenset[str]) -> Bound:
        kind = node.kind
        if kind == "const":
            constant = node.value
            return lambda scope: (0, constant)
        if kind == "ident":
            name = node.name
            if name in loop_vars or name in data_names:
                return lambda scope: (1, scope.get(name, _UNKNOWN))
            return lambda scope: (1, _UNKNOWN)
        if kind == "select":
            operand = build(node.target, loop_vars)  # type: ignore[arg-type]
            field_name = node.name
            if node.value:
                return lambda scope: (operand(scope)[0], False)

            def select(scope: dict[str, Any]) -> tuple[int, Any]:
                cost_, value = operand(scope)
                if type(value) is dict:
                    return cost_ + 1, value.get(field_name)
                if type(value) is _Sized:
                    return cost_ + 1, value
                return cost_ + 1, _UNKNOWN if value is _UNKNOWN else None
            return select
        if kind in ("list", "map", "struct"):
            base = {"list": _LIST_CREATE, "map": _MAP_CREATE, "struct": _STRUCT_CREATE}[kind]
            parts = [build(child, loop_vars) for child in node.args]
            count = len(parts)

            def create(scope: dict[str, Any]) -> tuple[int, Any]:
                total = base
                for part in parts:
                    total += part(scope)[0]
                return total, [None] * count if kind == "list" else _UNKNOWN
            return create
        if kind == "comprehension":
            return build_comprehension(node, loop_vars)
        return build_call(node, loop_vars)

    def build_comprehension(node: Node, loop_vars: frozenset[str]) -> Bound:
        rng = build(node.iter_range, loop_vars)  # type: ignore[arg-type]
        init = build(node.accu_init, loop_vars)  # type: ignore[arg-type]
        inner = loop_vars | {node.name, node.accu_var}
        condition = build(node.loop_condition, inner)  # type: ignore[arg-type]
        step = build(node.loop_step, inner)  # type: ignore[arg-type]
        result = build(node.result, inner)  # type: ignore[arg-type]
        iter_var, accu_var = node.name, node.accu_var
        _, static_body = walk.body(node, {node.accu_var: walk.unknown}, walk.unknown)
        cheap = static_body <= _CHEAP_BODY

        def comprehension(scope: dict[str, Any]) -> tuple[int, Any]:
            total, elements = rng(scope)
            total += init(scope)[0]
            count = _size(elements)
            inner_scope = dict(scope)
            inner_scope[accu_var] = _UNKNOWN
            if cheap or elements is _UNKNOWN or not isinstance(elements, (list, dict, _Sized)):
                total = _add(total, _mul(count, static_body))
            elif type(elements) is _Sized:  # every element is the same stand-in: one body, count times
                inner_scope[iter_var] = elements
                total = _add(total, _mul(count, condition(inner_scope)[0] + step(inner_scope)[0]))
            else:
                for element in elements:
                    inner_scope[iter_var] = element
                    total += condition(inner_scope)[0] + step(inner_scope)[0]
                    if total > limit_now[0]:
                        raise OverLimit
            inner_scope.pop(iter_var, None)
            return _add(total, result(inner_scope)[0]), _UNKNOWN
        return comprehension

    def build_call(node: Node, loop_vars: frozenset[str]) -> Bound:
        name = node.name
        operands = ([node.target] if node.target is not None else []) + node.args
        parts = [build(operand, loop_vars) for operand in operands]
        if name in _LOGICAL or name == "_?_:_":
            def short_circuit(scope: dict[str, Any]) -> tuple[int, Any]:
                costs = [part(scope)[0] for part in parts]
                if name == "_?_:_":
                    return costs[0] + max(costs[1], costs[2]), _UNKNOWN
                return sum(costs), _UNKNOWN
            return short_circuit

        def call(scope: dict[str, Any]) -> tuple[int, Any]:
            total, sizes, values = 0, [], []
            for part in parts:
                cost_, value = part(scope)
                total += cost_
                values.append(value)
                sizes.append(-1 if value is _UNKNOWN else _size(value))
            if name == "_[_]" and len(values) == 2:
                # An index into known data yields known data, as a select does.
                container, key = values
                if type(container) is _Sized:
                    return total + 1, container
                if type(container) is dict and not isinstance(key, _Sized) and key is not _UNKNOWN:
                    return total + 1, container.get(key)
                if type(container) is list and type(key) is int and -len(container) <= key < len(container):
                    return total + 1, container[key]
                return total + 1, _UNKNOWN
            if name == "@in" and values and type(values[-1]) is dict:
                return total + 1, _UNKNOWN  # cel-go charges a map lookup 1, whatever the map's size
            return _add(total, _Walk.own_cost(name, sizes)), _UNKNOWN
        return call

    top = build(root, frozenset())

    def bound(variables: dict[str, Any], limit: int) -> int:
        limit_now[0] = limit
        total = top(variables)[0]
        if total > limit:
            raise OverLimit
        return total
    return bound


def sized_bound(bound: Callable[[dict[str, Any], int], int], names: frozenset[str], size: int) -> int:
    """`bound`'s value for any variables whose strings, lists and maps are at most `size` long."""
    return bound({name: _Sized(size) for name in names}, SATURATED)
