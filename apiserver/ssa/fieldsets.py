"""Field sets: FieldsV1 trees and the set algebra structured-merge-diff does on them.

A set is a dict from path element (`f:name`, `k:{…}`, `v:…`, `i:N`) to the child set; the key
`"."` in a child marks that path itself as a member. On the wire (FieldsV1) a member with no
children is written `{}`; inside this module it is always `{".": {}}`, so "empty" means "nothing".
Operations never mutate their inputs. Used by every other ssa module and by `managed_fields`.
"""

from __future__ import annotations

from typing import Any, Iterator

from apiserver.ssa import elements, shapes

FieldSet = dict[str, Any]
SELF = "."


def from_fields_v1(raw: Any) -> FieldSet:
    """Parse a FieldsV1 object (the root itself is never a member)."""
    if not isinstance(raw, dict):
        raise ValueError("fieldsV1 must be an object")
    out: FieldSet = {}
    for key, sub in raw.items():
        child = _node_from_wire(sub) if key != SELF else {}
        if child:
            out[elements.canonicalize(key)] = child
    return out


def _node_from_wire(raw: Any) -> FieldSet:
    if not isinstance(raw, dict):
        raise ValueError("fieldsV1 nodes must be objects")
    if not raw:
        return {SELF: {}}
    out: FieldSet = {SELF: {}} if SELF in raw else {}
    for key, sub in raw.items():
        if key != SELF:
            child = _node_from_wire(sub)
            if child:
                out[elements.canonicalize(key)] = child
    return out


def to_fields_v1(fields: FieldSet) -> dict[str, Any]:
    return {k: _node_to_wire(fields[k]) for k in _in_order([k for k in fields if k != SELF])}


def _node_to_wire(node: FieldSet) -> dict[str, Any]:
    children = [k for k in node if k != SELF]
    if not children:
        return {}
    out: dict[str, Any] = {SELF: {}} if SELF in node else {}
    for key in _in_order(children):
        out[key] = _node_to_wire(node[key])
    return out


def _in_order(keys: list[str]) -> list[str]:
    """structured-merge-diff's order (`elements.sort_key`). A plain string sort already gives it
    when every element is of one kind other than list indexes, as nearly all are: that kind then
    begins both the first and the last key."""
    if len(keys) > 1:
        keys.sort()
        kind = keys[0][:2]
        if kind == "i:" or keys[-1][:2] != kind:
            keys.sort(key=elements.sort_key)
    return keys


def insert(fields: FieldSet, path: list[str] | tuple[str, ...]) -> None:
    """Add one path (in place: only for building a set that nobody else holds yet)."""
    if not path:
        return
    node = fields
    for element in path:
        node = node.setdefault(element, {})
    node[SELF] = {}


def has(fields: FieldSet, path: list[str] | tuple[str, ...]) -> bool:
    node = fields
    for element in path:
        if element not in node:
            return False
        node = node[element]
    return bool(path) and SELF in node


def member(fields: FieldSet, element: str) -> bool:
    return SELF in fields.get(element, {})


def under(fields: FieldSet, element: str) -> FieldSet:
    """The set below one element (structured-merge-diff's WithPrefix)."""
    return {k: v for k, v in fields.get(element, {}).items() if k != SELF}


def union(a: FieldSet, b: FieldSet) -> FieldSet:
    if not b:
        return a
    if not a:
        return b
    out = dict(a)
    for key, sub in b.items():
        out[key] = union(out[key], sub) if key in out else sub
    return out


def difference(a: FieldSet, b: FieldSet) -> FieldSet:
    """Paths of `a` that are not paths of `b` (membership by exact path)."""
    if not b:
        return a
    out: FieldSet = {}
    for key, sub in a.items():
        if key == SELF:
            if SELF not in b:
                out[SELF] = {}
        elif key in b:
            rest = difference(sub, b[key])
            if rest:
                out[key] = rest
        else:
            out[key] = sub
    return out


def recursive_difference(a: FieldSet, b: FieldSet) -> FieldSet:
    """`a` without the paths of `b` and everything below them."""
    if not b:
        return a
    out: FieldSet = {}
    for key, sub in a.items():
        if key == SELF:
            if SELF not in b:
                out[SELF] = {}
        elif key in b:
            if SELF in b[key]:
                continue
            rest = recursive_difference(sub, b[key])
            if rest:
                out[key] = rest
        else:
            out[key] = sub
    return out


def intersection(a: FieldSet, b: FieldSet) -> FieldSet:
    out: FieldSet = {}
    for key, sub in a.items():
        if key not in b:
            continue
        if key == SELF:
            out[SELF] = {}
        else:
            common = intersection(sub, b[key])
            if common:
                out[key] = common
    return out


def paths(fields: FieldSet, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Member paths in structured-merge-diff's order: this level's members, then each child."""
    keys = sorted((k for k in fields if k != SELF), key=elements.sort_key)
    for key in keys:
        if SELF in fields[key]:
            yield prefix + (key,)
    for key in keys:
        yield from paths({k: v for k, v in fields[key].items() if k != SELF}, prefix + (key,))


def ensure_named_fields_are_members(fields: FieldSet, node: shapes.Node) -> FieldSet:
    """Also own every struct field that has owned children (but not map entries): pruning removes
    a struct field only when nothing under it is owned any more."""
    out: FieldSet = {}
    for key, sub in fields.items():
        if key == SELF:
            out[SELF] = {}
            continue
        if key.startswith("f:"):
            child_node = shapes.field_node(node, key[2:])
            sub = ensure_named_fields_are_members(sub, child_node)
            if shapes.is_named_field(node, key[2:]) and SELF not in sub:
                sub = {SELF: {}, **sub}
        else:
            sub = ensure_named_fields_are_members(sub, shapes.items_node(node))
        out[key] = sub
    return out
