"""Validate a custom resource against its version's OpenAPI v3 schema, with upstream's messages.

Mirrors what kube-openapi's validator reports and how apiextensions-apiserver turns its results
into field errors: `Required value`, `Unsupported value: …: supported values: …` for enums,
`Too long`/`Too many` for maxLength/maxItems/maxProperties, and `Invalid value: V: <path> in body
…` for everything else (types, formats, patterns, bounds). List types and map keys are checked
here too (duplicates). Called by `strategy.py`; CEL rules are `cel_rules.py`'s.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import json
import math
import re
import uuid
from datetime import date, datetime
from typing import Any, Mapping

from apiserver import validation
from apiserver.errors import field_error

Causes = list[dict[str, str]]
Node = Mapping[str, Any]


def type_name(value: Any) -> str:
    """The JSON type of a value as kube-openapi names it in messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def go_value(value: Any) -> str:
    """A bound or enum value as Go's %v prints it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def validate(value: Any, schema: Node, path: str = "") -> Causes:
    causes: Causes = []
    _validate(value, schema, path, causes)
    return causes


def _in_body(path: str, text: str) -> str:
    return f"{path} in body {text}"


def _invalid(causes: Causes, path: str, value: Any, text: str) -> None:
    causes.append(validation.invalid(path, value, _in_body(path, text)))


def _types_match(value: Any, node: Node) -> bool:
    if node.get("x-kubernetes-int-or-string"):
        return isinstance(value, str) or (type_name(value) == "integer")
    wanted = node.get("type")
    if not wanted:
        return True
    have = type_name(value)
    if wanted == "number":
        return have in ("integer", "number")
    return bool(have == wanted)


def _validate(value: Any, node: Node, path: str, causes: Causes) -> None:
    if value is None and node.get("nullable"):
        return
    if not _types_match(value, node):
        wanted = "integer,string" if node.get("x-kubernetes-int-or-string") else node.get("type")
        _invalid(causes, path, value, f'must be of type {wanted}: "{type_name(value)}"')
        return
    if "enum" in node and value not in node["enum"]:
        causes.append(validation.not_supported(path, value, [go_value(v) for v in node["enum"]]))
    if isinstance(value, str):
        _string(value, node, path, causes)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _number(value, node, path, causes)
    elif isinstance(value, list):
        _array(value, node, path, causes)
    elif isinstance(value, dict):
        _object(value, node, path, causes)
    _combinators(value, node, path, causes)


def _string(value: str, node: Node, path: str, causes: Causes) -> None:
    if "maxLength" in node and len(value) > node["maxLength"]:
        unit = "byte" if node["maxLength"] == 1 else "bytes"
        causes.append(field_error("FieldValueTooLong", path,
                                  f"Too long: may not be more than {node['maxLength']} {unit}"))
    if "minLength" in node and len(value) < node["minLength"]:
        _invalid(causes, path, value, f"should be at least {node['minLength']} chars long")
    pattern = node.get("pattern")
    if pattern is not None and not _matches(pattern, value):
        _invalid(causes, path, value, f"should match '{pattern}'")
    fmt = node.get("format")
    if fmt and not node.get("x-kubernetes-int-or-string") and not format_ok(fmt, value):
        _invalid(causes, path, value, f'must be of type {fmt}: "{value}"')


def _matches(pattern: str, value: str) -> bool:
    try:
        return re.search(pattern, value) is not None
    except re.error:
        return True  # CRD validation rejects bad patterns; an old stored one does not block writes


def _number(value: float, node: Node, path: str, causes: Causes) -> None:
    if "maximum" in node:
        high = node["maximum"]
        if node.get("exclusiveMaximum") and value >= high:
            _invalid(causes, path, value, f"should be less than {go_value(high)}")
        elif value > high:
            _invalid(causes, path, value, f"should be less than or equal to {go_value(high)}")
    if "minimum" in node:
        low = node["minimum"]
        if node.get("exclusiveMinimum") and value <= low:
            _invalid(causes, path, value, f"should be greater than {go_value(low)}")
        elif value < low:
            _invalid(causes, path, value, f"should be greater than or equal to {go_value(low)}")
    factor = node.get("multipleOf")
    if factor and not _is_multiple(value, factor):
        _invalid(causes, path, value, f"should be a multiple of {go_value(factor)}")


def _is_multiple(value: float, factor: float) -> bool:
    quotient = value / factor
    return math.isclose(quotient, round(quotient), rel_tol=0, abs_tol=1e-9)


def _array(value: list[Any], node: Node, path: str, causes: Causes) -> None:
    if "maxItems" in node and len(value) > node["maxItems"]:
        causes.append(field_error("FieldValueTooMany", path,
                                  f"Too many: {len(value)}: must have at most {node['maxItems']} items"))
    if "minItems" in node and len(value) < node["minItems"]:
        _invalid(causes, path, value, f"should have at least {node['minItems']} items")
    if node.get("uniqueItems") and _has_duplicates(value):
        _invalid(causes, path, value, "shouldn't contain duplicates")
    items = node.get("items")
    if isinstance(items, Mapping):
        for index, item in enumerate(value):
            _validate(item, items, f"{path}[{index}]", causes)
    causes.extend(list_type_errors(value, node, path))


def _has_duplicates(value: list[Any]) -> bool:
    seen = set()
    for item in value:
        key = json.dumps(item, sort_keys=True)
        if key in seen:
            return True
        seen.add(key)
    return False


def list_type_errors(value: list[Any], node: Node, path: str) -> Causes:
    """`x-kubernetes-list-type` set and map: duplicates are `Duplicate value` as upstream reports."""
    list_type = node.get("x-kubernetes-list-type")
    causes: Causes = []
    if list_type == "set":
        seen: set[str] = set()
        for index, item in enumerate(value):
            key = json.dumps(item, sort_keys=True)
            if key in seen:
                causes.append(validation.duplicate(f"{path}[{index}]", item))
            seen.add(key)
    elif list_type == "map":
        keys = list(node.get("x-kubernetes-list-map-keys") or ())
        items_node = node.get("items") or {}
        defaults = {k: (items_node.get("properties") or {}).get(k, {}).get("default") for k in keys}
        seen_keys: set[str] = set()
        for index, item in enumerate(value):
            if not isinstance(item, dict):
                continue
            identity = {k: item.get(k, defaults[k]) for k in keys if item.get(k, defaults[k]) is not None}
            key = json.dumps(identity, sort_keys=True)
            if key in seen_keys:
                causes.append(validation.duplicate(f"{path}[{index}]", identity))
            seen_keys.add(key)
    return causes


def _object(value: dict[str, Any], node: Node, path: str, causes: Causes) -> None:
    if "maxProperties" in node and len(value) > node["maxProperties"]:
        causes.append(field_error("FieldValueTooMany", path,
                                  f"Too many: {len(value)}: must have at most {node['maxProperties']} items"))
    if "minProperties" in node and len(value) < node["minProperties"]:
        _invalid(causes, path, value, f"should have at least {node['minProperties']} properties")
    for name in node.get("required") or ():
        if name not in value:
            causes.append(validation.required(_child(path, name)))
    props = node.get("properties") or {}
    for name in sorted(value):
        child = props.get(name)
        if isinstance(child, Mapping):
            _validate(value[name], child, _child(path, name), causes)
    extra = node.get("additionalProperties")
    if isinstance(extra, Mapping):
        for name in sorted(value):
            if name not in props:
                _validate(value[name], extra, _child(path, name), causes)
    if node.get("x-kubernetes-embedded-resource"):
        causes.extend(_embedded(value, path))


def _embedded(value: dict[str, Any], path: str) -> Causes:
    """An embedded object must name its kind and apiVersion (upstream's embedded-resource check)."""
    causes: Causes = []
    if not value.get("kind"):
        causes.append(validation.required(_child(path, "kind"), "must not be empty"))
    if not value.get("apiVersion"):
        causes.append(validation.required(_child(path, "apiVersion"), "must not be empty"))
    return causes


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _combinators(value: Any, node: Node, path: str, causes: Causes) -> None:
    for sub in node.get("allOf") or ():
        _validate(value, sub, path, causes)
    any_of = node.get("anyOf")
    if any_of and not any(not validate(value, sub, path) for sub in any_of):
        _invalid(causes, path, value, "must validate at least one schema (anyOf)")
    one_of = node.get("oneOf")
    if one_of and sum(1 for sub in one_of if not validate(value, sub, path)) != 1:
        _invalid(causes, path, value, "must validate one and only one schema (oneOf)")
    negated = node.get("not")
    if isinstance(negated, Mapping) and not validate(value, negated, path):
        _invalid(causes, path, value, "must not validate the schema (not)")


# -- formats: the ones kube-openapi's default registry knows; others are not checked ----------
_HOSTNAME = re.compile(r"^[a-zA-Z0-9]([-a-zA-Z0-9]{0,62})?(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,62})?)*\.?$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
_MAC = re.compile(r"^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$")
_DURATION = re.compile(r"^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h|d|w))+$")
_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def format_ok(fmt: str, value: str) -> bool:
    checks = {
        "date-time": _date_time, "datetime": _date_time, "date": _date, "byte": _base64,
        "uuid": _uuid(None), "uuid3": _uuid(3), "uuid4": _uuid(4), "uuid5": _uuid(5),
        "ipv4": _ip(4), "ipv6": _ip(6), "cidr": _cidr, "mac": _MAC.match, "hostname": _hostname,
        "email": _EMAIL.match, "duration": _DURATION.match,
    }
    check = checks.get(fmt)
    return True if check is None else bool(check(value))


def _date_time(value: str) -> bool:
    if not _DATE_TIME.match(value):
        return False
    try:
        datetime.fromisoformat(value.replace("z", "Z").replace("Z", "+00:00").replace("t", "T"))
    except ValueError:
        return False
    return True


def _date(value: str) -> bool:
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return len(value) == 10


def _base64(value: str) -> bool:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _uuid(version: int | None) -> Any:
    def check(value: str) -> bool:
        try:
            parsed = uuid.UUID(value)
        except ValueError:
            return False
        return version is None or parsed.version == version
    return check


def _ip(version: int) -> Any:
    def check(value: str) -> bool:
        try:
            return ipaddress.ip_address(value).version == version
        except ValueError:
            return False
    return check


def _cidr(value: str) -> bool:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return False
    return "/" in value


def _hostname(value: str) -> bool:
    return len(value) <= 255 and bool(_HOSTNAME.match(value))
