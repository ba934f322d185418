"""Which parts of its variables a program reads, so that only those parts are converted to CEL.

cel-expr-python converts a variable's whole Python value the first time an expression touches it:
43 µs for a defaulted pod with its managedFields, when a rule that reads `object.spec.containers`
needs 13 µs of it. `Reads.of(root, names)` walks the checked tree (`checked_ast.py`) once per
program and records, per variable, the field paths it selects (`object.spec.containers`,
`has(object.metadata.labels)`, `object.?spec.?x`); wherever a path ends, or a variable is used
bare, the value is kept whole below that point. `project(data)` then keeps exactly those parts.
A projected value is indistinguishable to the program: every field it selects, tests or walks is
present as it was, and a field it selects that was missing is missing still. Used by
`environment.Activation`, which converts one projection per distinct plan and shares it.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from admission.cel.checked_ast import Node

_OPTIONAL_SELECT = "_?._"


class Reads:
    """The parts of each variable a program reads; `key` is equal for programs that read the same.

    `plans` maps each read variable to None (kept whole) or to a dict of the fields kept, each
    with its own plan. Variables a program never names are left out of its activation.
    """

    __slots__ = ("plans", "key")

    def __init__(self, plans: dict[str, Any]):
        self.plans = plans
        self.key = _freeze(plans)

    @classmethod
    def everything(cls, names: frozenset[str]) -> "Reads":
        return cls({name: None for name in names})

    @classmethod
    def of(cls, root: Node, names: frozenset[str]) -> "Reads":
        """The plan of the program whose checked tree is `root`, over the declared `names`."""
        if _bound_names(root) & {name.split(".")[0] for name in names}:
            # A comprehension or cel.bind variable shadows a declared one: reading the tree
            # would need scopes; keep everything instead.
            return cls.everything(names)
        plans: dict[str, Any] = {}
        for variable, fields in _paths(root, names):
            plans[variable] = _merged(plans.get(variable, {}), fields) if variable in plans else _tree(fields)
        # A declared name with a dot ("authorizer.requestResource") is reached through a select on
        # its first part: keep it whenever that part is read.
        for name in names:
            head = name.split(".")[0]
            if "." in name and head in plans:
                plans[name] = None
                plans[head] = None
        return cls(plans)

    def project(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """The values the program reads: read variables only, each cut to its plan."""
        return {name: _project(data[name], plan) for name, plan in self.plans.items() if name in data}


def _paths(node: Node, names: frozenset[str]) -> Iterator[tuple[str, list[str]]]:
    chain = _chain(node)
    if chain is not None:
        if chain[0] in names:
            yield chain
        return
    for child in _children(node):
        yield from _paths(child, names)


def _chain(node: Node) -> tuple[str, list[str]] | None:
    """(variable, fields) when `node` is `variable.f1.f2…` made of selects, has() tests and `.?`."""
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


def _bound_names(node: Node) -> set[str]:
    found: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if current.kind == "comprehension":
            found.update((current.name, current.accu_var))
        stack.extend(_children(current))
    return found


def _tree(fields: list[str]) -> Any:
    plan: Any = None
    for name in reversed(fields):
        plan = {name: plan}
    return plan


def _merged(plan: Any, fields: list[str]) -> Any:
    """`plan` widened to also keep the value at `fields` whole."""
    if plan is None:
        return None
    if not fields:
        return None
    head, rest = fields[0], fields[1:]
    plan[head] = _merged(plan[head], rest) if head in plan else _tree(rest)
    return plan


def _project(value: Any, plan: Any) -> Any:
    if plan is None or type(value) is not dict:
        return value  # whole; a select on a non-map fails the same way on the whole value
    return {name: _project(value[name], inner) for name, inner in plan.items() if name in value}


def _freeze(plan: Any) -> Any:
    if plan is None:
        return None
    return frozenset((name, _freeze(inner)) for name, inner in plan.items())
