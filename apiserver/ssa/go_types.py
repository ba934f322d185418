"""Which fields a Go-typed built-in object always carries, even when its JSON leaves them out.

kube compares objects after converting them to Go structs: a non-pointer struct field is there as
`{}` and a slice without omitempty as `null`, so `spec` or `template` never "appears" and gets no
`.` marker in managedFields, while a pointer struct such as `rollingUpdate` does. The facts come
from the protobuf field table (`apiserver/protobuf_schema.py`). `compare` asks through
`zero_of`; custom resources (no definition name) have no such fields.
"""

from __future__ import annotations

import functools
from typing import Any

from apiserver import protobuf_schema, schemas
from apiserver.ssa import shapes
from apiserver.ssa.shapes import MISSING


@functools.cache
def _zeros(definition: str) -> dict[str, Any]:
    plan = protobuf_schema.table().plans.get("k8s.io." + definition[len("io.k8s."):]) \
        if definition.startswith("io.k8s.") else None
    if plan is None:
        return {}
    zeros: dict[str, Any] = {}
    for field in plan.fill_messages:
        if field.message.mode == protobuf_schema.GENERIC:
            zeros[field.name] = {}
    for field in plan.fields.values():
        if (field.repeated or field.kind == protobuf_schema.MAP) and not field.omit and not field.hidden:
            zeros[field.name] = None
    return zeros


_ZEROS_BY_NODE: dict[int, tuple[shapes.Node, dict[str, Any]]] = {}


def zero_of(node: shapes.Node, key: str) -> Any:
    """What a Go object holds in field `key` of the struct at `node` when JSON omits it, or MISSING."""
    return zeros_at(node).get(key, MISSING)


def zeros_at(node: shapes.Node) -> dict[str, Any]:
    """Every field of the struct at `node` that a Go object holds when JSON omits it, with its value."""
    return schemas.remembered(_ZEROS_BY_NODE, node, id(node), lambda: _zeros_of(node))


def _zeros_of(node: shapes.Node) -> dict[str, Any]:
    name = shapes.definition_name(node)
    return _zeros(name) if name else {}
