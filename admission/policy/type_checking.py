"""`status.typeChecking` of a ValidatingAdmissionPolicy: field references checked against the schemas.

Upstream type-checks each validation expression (and messageExpression) against the OpenAPI
schema of every kind the policy's resourceRules name (no wildcards, no subresources, at most
10 kinds) and writes the problems as expression warnings. haru walks the checked syntax tree of
the compiled expression instead of re-compiling with typed variables: every field selection
rooted at `object` or `oldObject` (through `.all()`/`.exists()`-style macros too) is looked up
in the schema, and an unknown field becomes cel-go's "undefined field 'x'" at its position.
Other type errors are not found. Called by the API server's policy follower (`apiserver/admitting.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from admission.cel.checked_ast import wire_fields  # the one CheckedExpr wire reader
from admission.policy.compiled import CompiledPolicy
from admission.policy.expressions import CompiledExpression
from admission.view import ClusterView

MAX_TYPES = 10


# -- the serialized CheckedExpr, read with admission/cel/checked_ast.wire_fields ---------------------

@dataclass
class _Expr:
    id: int
    kind: str
    name: str = ""
    operand: "_Expr | None" = None
    children: list["_Expr"] = field(default_factory=list)
    # comprehension: iteration variable, range, and the parts evaluated with the variable bound
    iter_var: str = ""
    iter_range: "_Expr | None" = None
    body: list["_Expr"] = field(default_factory=list)


def _text(parts: dict[int, list[Any]], number: int) -> str:
    return parts[number][0].decode() if number in parts else ""


def _expr(data: bytes) -> _Expr:
    parts = wire_fields(data)
    node_id = parts.get(2, [0])[0]
    if 4 in parts:
        return _Expr(node_id, "ident", _text(wire_fields(parts[4][0]), 1))
    if 5 in parts:
        sel = wire_fields(parts[5][0])
        return _Expr(node_id, "select", _text(sel, 2), operand=_expr(sel[1][0]) if 1 in sel else None)
    if 6 in parts:
        call = wire_fields(parts[6][0])
        children = [_expr(a) for a in call.get(3, [])]
        if 1 in call:
            children.insert(0, _expr(call[1][0]))
        return _Expr(node_id, "call", _text(call, 2), children=children)
    if 7 in parts:
        return _Expr(node_id, "list", children=[_expr(e) for e in wire_fields(parts[7][0]).get(1, [])])
    if 8 in parts:
        children = []
        for entry_data in wire_fields(parts[8][0]).get(2, []):
            entry = wire_fields(entry_data)
            children += [_expr(entry[n][0]) for n in (3, 4) if n in entry]
        return _Expr(node_id, "map", children=children)
    if 9 in parts:
        comp = wire_fields(parts[9][0])
        body = [_expr(comp[n][0]) for n in (5, 6, 7) if n in comp]
        init = [_expr(comp[4][0])] if 4 in comp else []
        return _Expr(node_id, "comprehension", iter_var=_text(comp, 1),
                     iter_range=_expr(comp[2][0]) if 2 in comp else None, body=body, children=init)
    return _Expr(node_id, "const")


def _decode(serialized: bytes) -> tuple[_Expr, dict[int, int]]:
    envelope = wire_fields(serialized)
    checked = wire_fields(envelope[2][0]) if 2 in envelope else envelope
    positions: dict[int, int] = {}
    if 5 in checked:
        for entry in wire_fields(checked[5][0]).get(4, []):
            pair = wire_fields(entry)
            positions[pair.get(1, [0])[0]] = pair.get(2, [0])[0]
    return _expr(checked[4][0]), positions


# -- the schema walk -------------------------------------------------------------------------------

@dataclass
class _Issue:
    offset: int
    message: str


class _Checker:
    def __init__(self, schema: dict[str, Any], view: ClusterView, positions: dict[int, int]):
        self.root = schema
        self.view = view
        self.positions = positions
        self.issues: list[_Issue] = []

    def _node(self, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        if schema is None:
            return None
        node = self.view.resolve(schema)
        if node.get("x-kubernetes-preserve-unknown-fields") or node.get("x-kubernetes-int-or-string"):
            return None
        return node

    def schema_of(self, expr: _Expr, scope: dict[str, dict[str, Any] | None]) -> dict[str, Any] | None:
        """The schema an expression's value has, or None when unknown (checked children still)."""
        if expr.kind == "ident":
            if expr.name in scope:
                return scope[expr.name]
            return self.root if expr.name in ("object", "oldObject") else None
        if expr.kind == "select" and expr.operand is not None:
            parent = self._node(self.schema_of(expr.operand, scope))
            if parent is None:
                return None
            properties = parent.get("properties")
            if isinstance(properties, dict):
                if expr.name in properties:
                    found: dict[str, Any] | None = properties[expr.name]
                    return found
                if not isinstance(parent.get("additionalProperties"), dict):
                    self.issues.append(_Issue(self.positions.get(expr.id, 0), f"undefined field '{expr.name}'"))
                return None
            values = parent.get("additionalProperties")
            return values if isinstance(values, dict) else None
        self.visit(expr, scope)
        return None

    def visit(self, expr: _Expr, scope: dict[str, dict[str, Any] | None]) -> None:
        if expr.kind in ("ident", "select"):
            self.schema_of(expr, scope)
            return
        for child in expr.children:
            self.visit(child, scope)
        if expr.kind == "comprehension":
            element = None
            if expr.iter_range is not None:
                ranged = self._node(self.schema_of(expr.iter_range, scope))
                if ranged is not None and isinstance(ranged.get("items"), dict):
                    element = ranged["items"]
            inner = {**scope, expr.iter_var: element}
            for part in expr.body:
                self.visit(part, inner)


def _render(text: str, issues: list[_Issue]) -> str:
    lines = text.split("\n")
    rendered = []
    for issue in sorted(issues, key=lambda i: i.offset):
        line = text.count("\n", 0, issue.offset) + 1
        column = issue.offset - (text.rfind("\n", 0, issue.offset) + 1) + 1
        snippet = lines[line - 1] if line - 1 < len(lines) else ""
        rendered.append(f"ERROR: <input>:{line}:{column}: {issue.message}\n | {snippet}\n | {'.' * (column - 1)}^")
    return "\n".join(rendered)


def _kinds(policy: CompiledPolicy, view: ClusterView) -> list[tuple[str, str, str]]:
    found: set[tuple[str, str, str]] = set()
    for rule in policy.match_constraints.get("resourceRules") or []:
        groups, versions = rule.get("apiGroups") or [], rule.get("apiVersions") or []
        if any("*" in g for g in groups) or any("*" in v for v in versions):
            continue
        for group in sorted(groups):
            for version in sorted(versions):
                for resource in sorted(r for r in rule.get("resources") or [] if "*" not in r and "/" not in r):
                    ref = view.resource(group, version, resource)
                    if ref is not None:
                        found.add((group, version, ref.kind))
                        if len(found) == MAX_TYPES:
                            return sorted(found)
    return sorted(found)


def check_expression(expression: CompiledExpression, kinds: list[tuple[str, str, str]], view: ClusterView) -> str:
    """The warning text for one expression ("" when nothing is wrong), upstream's layout."""
    if expression.program is None:
        return ""
    root, positions = _decode(expression.program._expression.serialize())
    messages = []
    for group, version, kind in kinds:
        schema = view.schema(group, version, kind)
        if schema is None:
            continue
        checker = _Checker(schema, view, positions)
        checker.visit(root, {})
        if checker.issues:
            messages.append(f"{group}/{version}, Kind={kind}: {_render(expression.text, checker.issues)}\n")
    return "\n".join(messages)


def check(policy: CompiledPolicy, view: ClusterView) -> list[dict[str, str]]:
    """`status.typeChecking.expressionWarnings` for a policy."""
    kinds = _kinds(policy, view)
    warnings = []
    for index, validation in enumerate(policy.validations):
        text = check_expression(validation.expression, kinds, view)
        if text:
            warnings.append({"fieldRef": f"spec.validations[{index}].expression", "warning": text})
        if validation.message_expression is not None:
            text = check_expression(validation.message_expression, kinds, view)
            if text:
                warnings.append({"fieldRef": f"spec.validations[{index}].messageExpression", "warning": text})
    return warnings
