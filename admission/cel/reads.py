"""Which parts of its variables a program reads, so that only those parts are converted to CEL.

cel-expr-python converts a variable's whole Python value the first time an expression touches it:
43 µs for a defaulted pod with its managedFields, when a rule that reads `object.spec.containers`
needs a few µs of it. `Reads.of(root, names)` walks the checked tree (`checked_ast.py`) once per
program and records, per variable, the field paths it selects (`object.spec.containers`,
`has(object.metadata.labels)`, `object.?spec.?x`); wherever a path ends, or a variable is used
bare, the value is kept whole below that point. A comprehension over such a path (`all`,
`exists`, `map`, `filter`) keeps every element of a list, each cut to what the loop variable
is used for; a map it walks stays whole. `project(data)` then keeps exactly those parts. A
projected value is indistinguishable to the program: every field it selects, tests or walks is
present as it was, and a field it selects that was missing is missing still. Used by
`environment.Activation`, which converts once per request what all the programs evaluated in
its environment read (`Reads.widened`), and by `CompiledPolicy.reads`.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from admission.cel.checked_ast import Node

_OPTIONAL_SELECT = "_?._"


class Reads:
    """The parts of each variable a program reads; `key` is equal for programs that read the same.

    `plans` maps each read variable to None (kept whole) or to a dict of the fields kept, each
    with its own plan; under the key ELEMENTS, the plan for each element of a list.
    Variables a program never names are left out of its activation.
    """

    __slots__ = ("plans", "key")

    def __init__(self, plans: dict[str, Any]):
        self.plans = plans
        self.key = _freeze(plans)

    @classmethod
    def of(cls, root: Node, names: frozenset[str]) -> "Reads":
        """The plan of the program whose checked tree is `root`, over the declared `names`."""
        plans: dict[str, Any] = {}
        for variable, steps, whole in _uses(root, names, {}):
            plans[variable] = _add(plans.get(variable, {}), steps, whole)
        # A declared name with a dot ("authorizer.requestResource") is reached through a select on
        # its first part: keep it whenever that part is read.
        for name in names:
            head = name.split(".")[0]
            if "." in name and head in plans:
                plans[name] = None
                plans[head] = None
        return cls(plans)

    def widened(self, other: "Reads") -> "Reads":
        """What either reads: every variable of both, each kept as far as either needs it."""
        plans = dict(self.plans)
        for name, plan in other.plans.items():
            plans[name] = _union(plans[name], plan) if name in plans else plan
        return Reads(plans)

    def project(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """The values the program reads: read variables only, each cut to its plan."""
        return {name: _project(data[name], plan) for name, plan in self.plans.items() if name in data}


class _Elements:
    """The key under which a plan keeps its plan for a list's elements."""

    def __repr__(self) -> str:
        return "ELEMENTS"


ELEMENTS = _Elements()
# What a name in scope stands for: (declared variable, steps from it) or None (not data: an
# accumulator, or a loop over something computed).
_Scope = dict[str, "tuple[str, list[Any]] | None"]
_Use = tuple[str, list[Any], bool]  # (variable, steps, whole below the last step?)


def _uses(node: Node, names: frozenset[str], scope: _Scope) -> Iterator[_Use]:
    chain = _chain(node)
    if chain is not None:
        found = _resolve(chain, names, scope)
        if found is not None:
            yield found[0], found[1], True
        return
    if node.kind == "comprehension":
        yield from _comprehension(node, names, scope)
        return
    for child in _children(node):
        yield from _uses(child, names, scope)


def _comprehension(node: Node, names: frozenset[str], scope: _Scope) -> Iterator[_Use]:
    assert node.iter_range is not None
    inner: _Scope = dict(scope)
    inner[node.accu_var] = None
    chain = _chain(node.iter_range)
    over = _resolve(chain, names, scope) if chain is not None else None
    if over is not None:
        # The loop needs the elements (at least how many there are); its variable says which parts.
        variable, steps = over
        yield variable, steps + [ELEMENTS], False
        inner[node.name] = (variable, steps + [ELEMENTS])
    else:
        yield from _uses(node.iter_range, names, scope)
        inner[node.name] = None
    if node.accu_init is not None:
        yield from _uses(node.accu_init, names, scope)
    for part in (node.loop_condition, node.loop_step, node.result):
        if part is not None:
            yield from _uses(part, names, inner)


def _resolve(chain: tuple[str, list[str]], names: frozenset[str], scope: _Scope) -> tuple[str, list[Any]] | None:
    name, fields = chain
    if name in scope:
        bound = scope[name]
        return None if bound is None else (bound[0], bound[1] + fields)
    return (name, list(fields)) if name in names else None


def _chain(node: Node) -> tuple[str, list[str]] | None:
    """(name, fields) when `node` is `name.f1.f2…` made of selects, has() tests and `.?`."""
    fields: list[str] = []
    while True:
        if node.kind == "select" and node.target is not None:
            fields.append(node.name)
            node = node.target
        elif (node.kind == "call" and node.name == _OPTIONAL_SELECT and node.target is None
              and len(node.args) == 2 and node.args[1].kind == "const" and isinstance(node.args[1].value, str)):
            fields.append(node.args[1].value)
            node = node.args[0]
        elif node.kind == "ident":
            fields.reverse()
            return node.name, fields
        else:
            return None


def _children(node: Node) -> Iterator[Node]:
    if node.target is not None:
        yield node.target
    yield from node.args
    for part in (node.iter_range, node.accu_init, node.loop_condition, node.loop_step, node.result):
        if part is not None:
            yield part


def _add(plan: Any, steps: list[Any], whole: bool) -> Any:
    """`plan` widened to keep the value at `steps` (whole, or as far as other uses need it)."""
    if plan is None:
        return None
    if not steps:
        return None if whole else plan
    head = steps[0]
    plan[head] = _add(plan.get(head, {}), steps[1:], whole)
    return plan


def _union(first: Any, second: Any) -> Any:
    if first is None or second is None:
        return None
    merged = dict(first)
    for name, plan in second.items():
        merged[name] = _union(merged[name], plan) if name in merged else plan
    return merged


def _project(value: Any, plan: Any) -> Any:
    if plan is None:
        return value
    kind = type(value)
    if kind is dict:
        if ELEMENTS in plan:
            return value  # a loop over a map walks its keys: all of them
        return {name: _project(value[name], inner) for name, inner in plan.items() if name in value}
    if kind is list:
        inner = plan.get(ELEMENTS)
        return value if inner is None else [_project(item, inner) for item in value]
    return value  # a scalar, or a select on a non-map: fails the same way on the whole value


def _freeze(plan: Any) -> Any:
    if plan is None:
        return None
    return frozenset((name, _freeze(inner)) for name, inner in plan.items())
