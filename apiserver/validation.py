"""Validation shared by every kind: object names, labels, annotations, immutable metadata.

The messages are kube's (k8s.io/apimachinery validation and apimachinery/pkg/api/validation), so
a client sees the same `Invalid` causes as from a real server. Called by `strategy.py`; per-kind
rules live beside their strategy in `apiserver/kinds/`.
"""

from __future__ import annotations

import re
from typing import Any

from apiserver.errors import field_error

Causes = list[dict[str, str]]

_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_QUALIFIED_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")

DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_QUALIFIED_NAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
_TOTAL_ANNOTATION_SIZE = 256 * 1024


def _quote(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)


def invalid_value(field: str, value: Any, detail: str) -> dict[str, str]:
    return field_error("FieldValueInvalid", field, f"Invalid value: {_quote(value)}: {detail}")


def dns1123_label(value: str) -> list[str]:
    problems = []
    if len(value) > 63:
        problems.append("must be no more than 63 characters")
    if not _LABEL_RE.match(value):
        problems.append(DNS1123_LABEL_MSG)
    return problems


def dns1123_subdomain(value: str) -> list[str]:
    problems = []
    if len(value) > 253:
        problems.append("must be no more than 253 characters")
    if not _SUBDOMAIN_RE.match(value):
        problems.append(DNS1123_SUBDOMAIN_MSG)
    return problems


def path_segment_name(value: str) -> list[str]:
    if value in (".", ".."):
        return [f'may not be \'{value}\'']
    for bad in ("/", "%"):
        if bad in value:
            return [f"may not contain '{bad}'"]
    return []


NAME_RULES = {"label": dns1123_label, "subdomain": dns1123_subdomain, "path": path_segment_name}


def qualified_name(value: str) -> list[str]:
    """A label or annotation key: optional DNS subdomain prefix, '/', and a name part."""
    problems = []
    prefix, _, name = value.rpartition("/")
    if "/" in value:
        if not prefix:
            problems.append("prefix part must be non-empty")
        else:
            problems += ["prefix part " + p for p in dns1123_subdomain(prefix)]
    if not name:
        problems.append("name part must be non-empty")
    else:
        if len(name) > 63:
            problems.append("name part must be no more than 63 characters")
        if not _QUALIFIED_NAME_RE.match(name):
            problems.append(_QUALIFIED_NAME_MSG)
    return problems


def label_value(value: str) -> list[str]:
    problems = []
    if len(value) > 63:
        problems.append("must be no more than 63 characters")
    if not _LABEL_VALUE_RE.match(value):
        problems.append(_LABEL_VALUE_MSG)
    return problems


def labels(values: Any, field: str) -> Causes:
    causes: Causes = []
    if not isinstance(values, dict):
        return causes
    for key, value in values.items():
        for problem in qualified_name(key):
            causes.append(invalid_value(field, key, problem))
        for problem in label_value(value if isinstance(value, str) else str(value)):
            causes.append(invalid_value(f"{field}", value, problem))
    return causes


def annotations(values: Any, field: str) -> Causes:
    causes: Causes = []
    if not isinstance(values, dict):
        return causes
    total = 0
    for key, value in values.items():
        for problem in qualified_name(key.lower()):
            causes.append(invalid_value(field, key, problem))
        total += len(key) + len(value or "")
    if total > _TOTAL_ANNOTATION_SIZE:
        causes.append(field_error("FieldValueTooLong", field, f"Too long: must have at most {_TOTAL_ANNOTATION_SIZE} bytes"))
    return causes


def object_meta(meta: dict[str, Any], *, namespaced: bool, name_rule: str = "subdomain") -> Causes:
    causes: Causes = []
    name = meta.get("name") or ""
    if not name:
        if not meta.get("generateName"):
            causes.append(field_error("FieldValueRequired", "metadata.name", "Required value: name or generateName is required"))
    else:
        for problem in NAME_RULES[name_rule](name):
            causes.append(invalid_value("metadata.name", name, problem))
    if namespaced:
        if not meta.get("namespace"):
            causes.append(field_error("FieldValueRequired", "metadata.namespace", "Required value"))
    elif meta.get("namespace"):
        causes.append(field_error("FieldValueForbidden", "metadata.namespace", "Forbidden: not allowed on this type"))
    causes += labels(meta.get("labels"), "metadata.labels")
    causes += annotations(meta.get("annotations"), "metadata.annotations")
    return causes


def object_meta_update(new: dict[str, Any], old: dict[str, Any]) -> Causes:
    causes: Causes = []
    for key in ("name", "namespace", "uid", "creationTimestamp"):
        if new.get(key) != old.get(key):
            causes.append(invalid_value(f"metadata.{key}", new.get(key), "field is immutable"))
    return causes
