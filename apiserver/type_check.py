"""Wrong JSON types in a request body, reported as kube's decoder reports them (400 BadRequest).

A real server decodes a body into Go structs; a string where an int32 belongs fails there with
`json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports.containerPort
of type int32`. We check the same thing against the kind's 1.36 schema with jsonschema-rs (a
validator compiled once per kind, ~3 µs per Pod) and only report type mismatches: enums, required
fields and formats are validation's job (422 Invalid), not the decoder's. Called by `writing.py`.
"""

from __future__ import annotations

import functools
from typing import Any

import jsonschema_rs

from apiserver import errors, schemas

_JSON_TYPES = {dict: "object", list: "array", str: "string", bool: "bool", int: "number", float: "number",
               type(None): "null"}
_GO_TYPES = {"int32": "int32", "int64": "int64", "double": "float64", "byte": "[]uint8", "date-time": "Time"}


@functools.cache
def _validator(definition: str) -> Any:
    schema = dict(schemas.definitions()[definition])
    schema["$defs"] = schemas.definitions()
    return jsonschema_rs.Draft202012Validator(schema)


def check(obj: dict[str, Any], group: str, version: str, kind: str) -> None:
    definition = schemas.name_for_kind(group, version, kind)
    if definition is None:
        return
    validator = _validator(definition)
    if validator.is_valid(obj):
        return
    for error in validator.iter_errors(obj):
        if "is not of type" not in error.message:
            continue
        path = list(error.instance_path)
        value = error.instance
        raise errors.bad_request(
            f'{kind} in version "{version}" cannot be handled as a {kind}: json: cannot unmarshal '
            f"{_JSON_TYPES.get(type(value), 'value')} into Go struct field {_go_field(definition, path)}"
        )


def _go_field(definition: str, path: list[Any]) -> str:
    """`<Parent Go type>.<json path without indices> of type <Go type>`, as encoding/json words it."""
    node: dict[str, Any] = schemas.definitions()[definition]
    parent = definition.rsplit(".", 1)[-1]
    for step in path:
        resolved_name = schemas.ref_name(node)
        if resolved_name:
            parent = resolved_name.rsplit(".", 1)[-1]
        node = schemas.resolve(node)
        if isinstance(step, int):
            node = node.get("items") or {}
        else:
            props = node.get("properties")
            node = (props or {}).get(step) or node.get("additionalProperties") or {}
    leaf = schemas.resolve(node)
    leaf_type = leaf.get("type")
    if isinstance(leaf_type, list):
        leaf_type = next((t for t in leaf_type if t != "null"), "")
    go_type = _GO_TYPES.get(leaf.get("format", ""), {"integer": "int", "number": "float64", "string": "string",
                                                     "boolean": "bool", "array": "[]", "object": "struct"}
                            .get(leaf_type or "", "value"))
    fields = ".".join(str(step) for step in path if not isinstance(step, int))
    return f"{parent}.{fields} of type {go_type}"
