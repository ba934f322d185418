"""How server-side apply reads a schema node: a struct, a map, a list (atomic, set or keyed) or a leaf.

The nodes are the 1.36 JSON schema definitions (`apiserver/schemas.py`) or a CRD's openAPIV3Schema:
`properties`, `additionalProperties`, `items` and the `x-kubernetes-*` markers. Missing schema means
"deduced" as structured-merge-diff has it: maps are granular, lists atomic. The rules for lists follow
kube-openapi's conversion (list-type first, then patch strategy). Called by the value walks
(`to_set`, `compare`, `merge`, `remove`) and by `fieldsets.ensure_named_fields_are_members`.
"""

from __future__ import annotations

import functools
from typing import Any

from apiserver import schemas

Node = dict[str, Any] | None


class _Missing:
    """A field that is not there at all (JSON null is None, a value)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
DEFINITION_MARK = "x-haru-definition"  # for_object's copy of a root definition keeps its name here

_OBJECT_META = {"$ref": "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
# List-map key defaults that kube's OpenAPI declares (`+default="TCP"` on the Go types) but the
# kubernetes-validate schemas leave out; structured-merge-diff keys items with them.
_KEY_DEFAULTS = {
    ("io.k8s.api.core.v1.ContainerPort", "protocol"): "TCP",
    ("io.k8s.api.core.v1.ServicePort", "protocol"): "TCP",
}


_BY_REF: dict[str, dict[str, Any]] = {}  # `$ref` → definition; the walks resolve the same refs all the time


def resolve(node: Node) -> Node:
    if not node:
        return None
    ref = node.get("$ref")
    if isinstance(ref, str):
        found = _BY_REF.get(ref)
        if found is None:
            found = _BY_REF[ref] = schemas.resolve(node)
        return found
    return schemas.resolve(node) if "allOf" in node else node


@functools.cache
def _names_by_identity() -> dict[int, str]:
    return {id(schema): name for name, schema in schemas.definitions().items()}


def definition_name(node: Node) -> str | None:
    """The 1.36 definition a node is or points at (None for CRD schemas and inline nodes)."""
    if not node:
        return None
    name = node.get(DEFINITION_MARK) or schemas.ref_name(node)
    if name is None and len(node.get("allOf", ())) == 1:
        name = schemas.ref_name(node["allOf"][0])
    return name or _names_by_identity().get(id(node))


# What the walks ask of a node is remembered by the node's identity (`schemas.remembered`).
_ROOTS: dict[int, tuple[Node, dict[str, Any]]] = {}
_FIELD_NODES: dict[tuple[int, str], tuple[Node, Node]] = {}
_LIST_SEMANTICS: dict[int, tuple[Node, tuple[str, list[str]]]] = {}
_ATOMIC_MAPS: dict[int, tuple[Node, bool]] = {}


def for_object(schema: Node) -> dict[str, Any]:
    """The root node for a whole object: its metadata is always ObjectMeta (CRD schemas say only
    `type: object` there, and the apiserver types it as ObjectMeta all the same)."""
    return schemas.remembered(_ROOTS, schema, id(schema), lambda: _root_for(schema))


def _root_for(schema: Node) -> dict[str, Any]:
    root = dict(resolve(schema) or {})
    name = definition_name(schema)
    if name:
        root[DEFINITION_MARK] = name
    properties = dict(root.get("properties") or {})
    metadata = resolve(properties.get("metadata"))
    if not metadata or "properties" not in metadata:
        properties["metadata"] = _OBJECT_META
    root["properties"] = properties
    return root


def field_node(node: Node, key: str) -> Node:
    """The schema of `key` inside an object node: its property, else the map's value type."""
    if node is None:
        return None
    return schemas.remembered(_FIELD_NODES, node, (id(node), key), lambda: _field_node(node, key))


def _field_node(node: Node, key: str) -> Node:
    struct = resolve(node)
    if not struct:
        return None
    properties = struct.get("properties")
    if isinstance(properties, dict) and key in properties:
        found: dict[str, Any] = properties[key]
        return found
    values = struct.get("additionalProperties")
    return values if isinstance(values, dict) else None


def is_named_field(node: Node, key: str) -> bool:
    struct = resolve(node)
    properties = struct.get("properties") if struct else None
    return isinstance(properties, dict) and key in properties


def map_is_atomic(node: Node) -> bool:
    if node is None:
        return False
    return schemas.remembered(_ATOMIC_MAPS, node, id(node), lambda: any(
        n is not None and n.get("x-kubernetes-map-type") == "atomic" for n in (node, resolve(node))))


def items_node(node: Node) -> Node:
    resolved = resolve(node)
    return resolved.get("items") if resolved else None


def list_semantics(node: Node) -> tuple[str, list[str]]:
    """('map', keys) | ('set', []) | ('atomic', []) for a list field's node (callers must not
    change the keys list: it is remembered)."""
    if node is None:
        return "atomic", []
    return schemas.remembered(_LIST_SEMANTICS, node, id(node), lambda: _list_semantics(node))


def _list_semantics(node: dict[str, Any]) -> tuple[str, list[str]]:
    resolved = resolve(node) or {}
    marks = {**resolved, **node}
    list_type = marks.get("x-kubernetes-list-type")
    if list_type == "map":
        keys = marks.get("x-kubernetes-list-map-keys") or []
        return ("map", list(keys)) if keys else ("atomic", [])
    if list_type == "set":
        return "set", []
    if list_type == "atomic":
        return "atomic", []
    strategy = marks.get("x-kubernetes-patch-strategy")
    if strategy in ("merge", "merge,retainKeys"):
        merge_key = marks.get("x-kubernetes-patch-merge-key")
        return ("map", [merge_key]) if merge_key else ("set", [])
    return "atomic", []


def key_default(list_node: Node, key: str) -> Any:
    """The default of a list-map key field, or None when the schema declares none."""
    items = items_node(list_node)
    if not items:
        return None
    field = field_node(items, key)
    if field is not None:
        for candidate in (field, resolve(field)):
            if candidate and "default" in candidate:
                return candidate["default"]
    name = schemas.ref_name(items)
    return _KEY_DEFAULTS.get((name, key)) if name else None


def classify(node: Node, *values: Any, promote_empty: bool = True) -> str:
    """'map', 'list' or 'leaf' for values at one schema node. Atomic maps and lists are leaves; so
    are mixed types, and (with promote_empty) values that are all empty or absent, which keeps
    the empty/null distinction as structured-merge-diff's walkers do."""
    # One pass instead of several all(...) generators: this runs for every node of every write.
    dicts = lists = present = empty = 0
    for v in values:
        if v is MISSING or v is None:
            continue
        present += 1
        if isinstance(v, dict):
            dicts += 1
        elif isinstance(v, list):
            lists += 1
        else:
            return "leaf"  # a scalar among them: a plain or mixed value, a leaf either way
        if not v:
            empty += 1
    if not present or (promote_empty and empty == present):
        return "leaf"
    if dicts == present:
        return "leaf" if map_is_atomic(node) else "map"
    if lists == present:
        return "leaf" if list_semantics(node)[0] == "atomic" else "list"
    return "leaf"
