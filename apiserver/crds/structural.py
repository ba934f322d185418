"""Whether a CRD version's schema is structural, with upstream's field errors when it is not.

A structural schema names a type for every specified field and array item, uses no `$ref`, keeps
`properties` and `additionalProperties` apart, asks only name/generateName of the root metadata,
and uses the x-kubernetes extensions consistently (int-or-string without a type, list-map keys for
map lists, embedded resources as objects). Defaults must themselves validate against their node.
Paths read as upstream prints them: `…openAPIV3Schema.properties[spec].items.type`. Called by
`crd_validation.py` for every version.
"""

from __future__ import annotations

from typing import Any, Mapping

from apiserver import validation
from apiserver.crds import schema_validation

Causes = list[dict[str, str]]
_TYPES = ("array", "boolean", "integer", "number", "object", "string")


def check(schema: Mapping[str, Any], path: str) -> Causes:
    causes: Causes = []
    if not schema.get("type"):
        if not schema.get("x-kubernetes-preserve-unknown-fields"):
            causes.append(validation.required(f"{path}.type", "must not be empty at the root"))
    elif schema.get("type") != "object":
        causes.append(validation.invalid(f"{path}.type", schema["type"], "must be object at the root"))
    metadata = (schema.get("properties") or {}).get("metadata")
    if isinstance(metadata, Mapping):
        extra = set(metadata) - {"type", "properties", "description"}
        names = set((metadata.get("properties") or {})) - {"name", "generateName"}
        if extra or names or metadata.get("type") not in (None, "object"):
            causes.append(validation.forbidden(
                f"{path}.properties[metadata]",
                "must not specify anything other than name and generateName, but metadata is implicitly specified"))
    _node(schema, path, causes, context="root")
    return causes


def _node(node: Mapping[str, Any], path: str, causes: Causes, *, context: str) -> None:
    if "$ref" in node:
        causes.append(validation.forbidden(f"{path}.$ref", "$ref is not supported"))
    kind = node.get("type")
    int_or_string = node.get("x-kubernetes-int-or-string")
    preserve = node.get("x-kubernetes-preserve-unknown-fields")
    if kind and kind not in _TYPES:
        causes.append(validation.not_supported(f"{path}.type", kind, list(_TYPES)))
    if preserve is False:
        causes.append(validation.invalid(f"{path}.x-kubernetes-preserve-unknown-fields", False,
                                         "must be true or undefined"))
    if int_or_string and kind:
        causes.append(validation.invalid(f"{path}.type", kind, "must be empty if x-kubernetes-int-or-string is true"))
    if not kind and not int_or_string and not preserve and context != "root":
        detail = "must not be empty for specified array items" if context == "items" else \
            "must not be empty for specified object fields"
        causes.append(validation.required(f"{path}.type", detail))
    if node.get("x-kubernetes-embedded-resource") and kind != "object":
        causes.append(validation.invalid(f"{path}.type", kind or "",
                                         "must be object if x-kubernetes-embedded-resource is true"))
    props = node.get("properties")
    extra = node.get("additionalProperties")
    # Upstream lets `additionalProperties: true` sit beside properties (keys the node does not name
    # are then kept); `false` or a schema there would contradict the API convention of pruning.
    if props and extra is not None and extra is not True:
        causes.append(validation.forbidden(f"{path}.additionalProperties",
                                           "additionalProperties and properties are mutual exclusive"))
    if extra is not None and context == "root":
        causes.append(validation.forbidden(f"{path}.additionalProperties", "must not be used at the root"))
    if extra is not None and node.get("x-kubernetes-embedded-resource"):
        causes.append(validation.forbidden(f"{path}.additionalProperties",
                                           "must not be used if x-kubernetes-embedded-resource is set"))
    if kind == "array" and not isinstance(node.get("items"), Mapping):
        causes.append(validation.required(f"{path}.items", "must be specified"))
    _list_type(node, path, causes)
    if "default" in node:
        for cause in schema_validation.validate(node["default"], node, "default"):
            causes.append({**cause, "field": f"{path}.default"})
    for name, child in (props or {}).items():
        if isinstance(child, Mapping):
            _node(child, f"{path}.properties[{name}]", causes, context="property")
    if isinstance(extra, Mapping):
        _node(extra, f"{path}.additionalProperties", causes, context="property")
    items = node.get("items")
    if isinstance(items, Mapping):
        _node(items, f"{path}.items", causes, context="items")
    for combinator in ("allOf", "anyOf", "oneOf"):
        for index, sub in enumerate(node.get(combinator) or ()):
            if isinstance(sub, Mapping) and "default" in sub:
                causes.append(validation.forbidden(f"{path}.{combinator}[{index}].default",
                                                   "must not be set inside allOf, anyOf, oneOf or not"))


def _list_type(node: Mapping[str, Any], path: str, causes: Causes) -> None:
    list_type = node.get("x-kubernetes-list-type")
    if list_type is None:
        if node.get("x-kubernetes-list-map-keys"):
            causes.append(validation.forbidden(f"{path}.x-kubernetes-list-map-keys",
                                               "must be empty if x-kubernetes-list-type is not map"))
        return
    if node.get("type") != "array":
        causes.append(validation.invalid(f"{path}.type", node.get("type", ""),
                                         "must be array if x-kubernetes-list-type is specified"))
        return
    if list_type not in ("atomic", "set", "map"):
        causes.append(validation.not_supported(f"{path}.x-kubernetes-list-type", list_type, ["atomic", "set", "map"]))
        return
    keys = node.get("x-kubernetes-list-map-keys") or []
    if list_type != "map":
        if keys:
            causes.append(validation.forbidden(f"{path}.x-kubernetes-list-map-keys",
                                               "must be empty if x-kubernetes-list-type is not map"))
        return
    if not keys:
        causes.append(validation.required(f"{path}.x-kubernetes-list-map-keys",
                                          "must not be empty if x-kubernetes-list-type is map"))
        return
    items = node.get("items") or {}
    if items.get("type") != "object":
        causes.append(validation.invalid(f"{path}.items.type", items.get("type", ""),
                                         "must be object if parent array's x-kubernetes-list-type is map"))
        return
    required = set(items.get("required") or ())
    for index, key in enumerate(keys):
        prop = (items.get("properties") or {}).get(key)
        if prop is None:
            causes.append(validation.invalid(f"{path}.x-kubernetes-list-map-keys[{index}]", key,
                                             "entries must all be names of item properties"))
        elif key not in required and "default" not in prop:
            causes.append(validation.required(
                f"{path}.items.properties[{key}]",
                "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"))
