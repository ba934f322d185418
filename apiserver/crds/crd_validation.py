"""CustomResourceDefinition validation: what makes the real server answer 422 for a CRD.

Checks, with upstream's paths and texts: the name is `<plural>.<group>`; the group is a domain
with a dot (and protected `*.k8s.io` groups carry the approval annotation); names are DNS-1035
labels (kind and listKind in mixed case) and kind differs from listKind; scope is Cluster or
Namespaced; versions are unique DNS-1035 names with exactly one storage version, each with a
structural schema (`structural.py`), valid printer columns, scale paths, selectable fields and
CEL rules that compile. Called by `crd_strategy.py`.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from apiserver import validation
from apiserver.errors import field_error
from apiserver.crds import cel_rules, jsonpath, structural

Causes = list[dict[str, str]]
APPROVAL_ANNOTATION = "api-approved.kubernetes.io"
_COLUMN_TYPES = ["integer", "number", "string", "boolean", "date"]
_COLUMN_FORMATS = ["int32", "int64", "float", "double", "byte", "date", "date-time", "password"]
_MAX_SELECTABLE = 8
_PROTECTED = re.compile(r"(^|\.)(k8s\.io|kubernetes\.io)$")


def validate(crd: Mapping[str, Any]) -> Causes:
    causes: Causes = []
    spec = crd.get("spec") or {}
    meta = crd.get("metadata") or {}
    names = spec.get("names") or {}
    group = spec.get("group") or ""
    plural = names.get("plural") or ""
    name = meta.get("name") or ""
    if name != f"{plural}.{group}":
        causes.append(validation.invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))
    causes += _group(group, meta)
    causes += _names(names)
    scope = spec.get("scope")
    if not scope:
        causes.append(validation.required("spec.scope"))
    elif scope not in ("Cluster", "Namespaced"):
        causes.append(validation.not_supported("spec.scope", scope, ["Cluster", "Namespaced"]))
    causes += _versions(spec.get("versions") or [])
    strategy = (spec.get("conversion") or {}).get("strategy", "None")
    if strategy not in ("None", "Webhook"):
        causes.append(validation.not_supported("spec.conversion.strategy", strategy, ["None", "Webhook"]))
    if spec.get("preserveUnknownFields"):
        causes.append(validation.invalid("spec.preserveUnknownFields", True,
                                         "must be false in order to use defaults in the schema"))
    return causes


def validate_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Causes:
    causes = validate(new)
    new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    for key in ("group",):
        causes += validation.immutable(f"spec.{key}", new_spec.get(key), old_spec.get(key))
    if (old.get("status") or {}).get("acceptedNames", {}).get("plural"):
        causes += validation.immutable("spec.names.plural", (new_spec.get("names") or {}).get("plural"),
                                       (old_spec.get("names") or {}).get("plural"))
    causes += validation.immutable("spec.scope", new_spec.get("scope"), old_spec.get("scope"))
    stored = (old.get("status") or {}).get("storedVersions") or []
    present = {v.get("name") for v in new_spec.get("versions") or []}
    for index, version in enumerate(stored):
        if version not in present:
            causes.append(validation.invalid(f"status.storedVersions[{index}]", version,
                                             "must appear in spec.versions"))
    return causes


def _group(group: str, meta: Mapping[str, Any]) -> Causes:
    if not group:
        return [validation.required("spec.group")]
    causes = [validation.invalid("spec.group", group, problem) for problem in validation.dns1123_subdomain(group)]
    if "." not in group:
        causes.append(validation.invalid("spec.group", group, "should be a domain with at least one dot"))
    if _PROTECTED.search(group) and APPROVAL_ANNOTATION not in (meta.get("annotations") or {}):
        causes.append(validation.required(
            f"metadata.annotations[{APPROVAL_ANNOTATION}]",
            f'protected groups must have approval annotation "{APPROVAL_ANNOTATION}", '
            "see https://github.com/kubernetes/enhancements/pull/1111"))
    return causes


def _label(value: str, where: str, *, mixed_case: bool = False) -> Causes:
    problems = validation.dns1035_label(value.lower() if mixed_case else value)
    if not problems:
        return []
    text = ",".join(problems)
    if mixed_case:
        text = "may have mixed case, but should otherwise match: " + text
    return [validation.invalid(where, value, text)]


def _names(names: Mapping[str, Any]) -> Causes:
    causes: Causes = []
    for key, mixed in (("plural", False), ("singular", False), ("kind", True), ("listKind", True)):
        value = names.get(key) or ""
        where = f"spec.names.{key}"
        if not value:
            if key in ("plural", "kind"):
                causes.append(validation.required(where))
            continue
        causes += _label(value, where, mixed_case=mixed)
    if names.get("kind") and names.get("kind") == names.get("listKind"):
        causes.append(validation.invalid("spec.names.listKind", names["listKind"], "kind and listKind cannot be the same"))
    for key in ("shortNames", "categories"):
        for index, value in enumerate(names.get(key) or []):
            causes += _label(str(value), f"spec.names.{key}[{index}]")
    return causes


def _versions(versions: list[Any]) -> Causes:
    if not versions:
        return [validation.required("spec.versions")]
    causes: Causes = []
    seen: set[str] = set()
    for index, version in enumerate(versions):
        where = f"spec.versions[{index}]"
        name = version.get("name") or ""
        if not name:
            causes.append(validation.required(f"{where}.name"))
        else:
            causes += [validation.invalid(f"{where}.name", name, p) for p in validation.dns1035_label(name)]
        if name in seen:
            causes.append(validation.invalid("spec.versions", versions, "must contain unique version names"))
        seen.add(name)
        causes += _version(version, where)
    storage = sum(1 for v in versions if v.get("storage"))
    if storage != 1:
        causes.append(validation.invalid("spec.versions", versions, "must have exactly one version marked as storage version"))
    if not any(v.get("served") for v in versions):
        causes.append(validation.invalid("spec.versions", versions, "must have at least one version marked as served"))
    return causes


def _version(version: Mapping[str, Any], where: str) -> Causes:
    causes: Causes = []
    schema = (version.get("schema") or {}).get("openAPIV3Schema")
    schema_path = f"{where}.schema.openAPIV3Schema"
    if not isinstance(schema, Mapping):
        causes.append(validation.required(schema_path, "schemas are required"))
        schema = None
    else:
        causes += structural.check(schema, schema_path)
        causes += _rules(schema, schema_path)
    for index, column in enumerate(version.get("additionalPrinterColumns") or []):
        causes += _column(column, f"{where}.additionalPrinterColumns[{index}]")
    scale = (version.get("subresources") or {}).get("scale")
    if scale is not None:
        causes += _scale(scale, f"{where}.subresources.scale")
    selectable = version.get("selectableFields") or []
    if len(selectable) > _MAX_SELECTABLE:
        causes.append(field_error("FieldValueTooMany", f"{where}.selectableFields",
                                             f"Too many: {len(selectable)}: must have at most {_MAX_SELECTABLE} items"))
    for index, field in enumerate(selectable):
        causes += _selectable(field, schema, f"{where}.selectableFields[{index}].jsonPath")
    return causes


def _column(column: Mapping[str, Any], where: str) -> Causes:
    causes: Causes = []
    if not column.get("name"):
        causes.append(validation.required(f"{where}.name"))
    kind = column.get("type")
    if not kind:
        causes.append(validation.required(f"{where}.type"))
    elif kind not in _COLUMN_TYPES:
        causes.append(validation.not_supported(f"{where}.type", kind, _COLUMN_TYPES))
    fmt = column.get("format")
    if fmt and fmt not in _COLUMN_FORMATS:
        causes.append(validation.not_supported(f"{where}.format", fmt, _COLUMN_FORMATS))
    path = column.get("jsonPath")
    if not path:
        causes.append(validation.required(f"{where}.jsonPath"))
    else:
        try:
            jsonpath.parse(path)
        except ValueError:
            causes.append(validation.invalid(f"{where}.jsonPath", path, "must be a simple json path"))
    return causes


def _scale(scale: Mapping[str, Any], where: str) -> Causes:
    causes: Causes = []
    for key, prefix in (("specReplicasPath", ".spec."), ("statusReplicasPath", ".status.")):
        path = scale.get(key)
        if not path:
            causes.append(validation.required(f"{where}.{key}"))
        elif not path.startswith(prefix) or not _simple(path):
            causes.append(validation.invalid(f"{where}.{key}", path, f"should be a json path under {prefix.rstrip('.')}"))
    selector = scale.get("labelSelectorPath")
    if selector and (not selector.startswith((".spec.", ".status.")) or not _simple(selector)):
        causes.append(validation.invalid(f"{where}.labelSelectorPath", selector,
                                         "should be a json path under either .spec or .status"))
    return causes


def _simple(path: str) -> bool:
    return all(part for part in path[1:].split(".")) and "[" not in path


def _selectable(field: Mapping[str, Any], schema: Mapping[str, Any] | None, where: str) -> Causes:
    path = field.get("jsonPath") or ""
    if not path:
        return [validation.required(where)]
    if not path.startswith(".") or not _simple(path):
        return [validation.invalid(where, path, "must be a simple json path")]
    node: Any = schema
    for part in path[1:].split("."):
        node = ((node or {}).get("properties") or {}).get(part)
        if node is None:
            return [validation.invalid(where, path, "is an invalid path: does not refer to a valid field")]
    if node.get("type") not in ("string", "integer", "boolean") and not node.get("x-kubernetes-int-or-string"):
        return [validation.invalid(where, path, "must point to a field of type string, boolean or integer. "
                                                "Enum string fields and strings with formats are allowed.")]
    return []


def _rules(node: Any, path: str) -> Causes:
    if not isinstance(node, Mapping):
        return []
    causes: Causes = []
    for index, rule in enumerate(node.get("x-kubernetes-validations") or ()):
        where = f"{path}.x-kubernetes-validations[{index}]"
        text = rule.get("rule")
        if not text:
            causes.append(validation.required(f"{where}.rule"))
            continue
        if not cel_rules.available():
            continue  # nothing can compile rules here: the CRD is stored, the rule is reported at use
        problem = cel_rules.compile_error(str(text))
        if problem is not None:
            causes.append(validation.invalid(f"{where}.rule", text, f"compilation failed: {problem}"))
        expression = rule.get("messageExpression")
        if expression:
            problem = cel_rules.compile_error(str(expression))
            if problem is not None:
                causes.append(validation.invalid(f"{where}.messageExpression", expression,
                                                 f"messageExpression compilation failed: {problem}"))
        reason = rule.get("reason")
        if reason and reason not in ("FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired",
                                     "FieldValueDuplicate"):
            causes.append(validation.not_supported(f"{where}.reason", reason, [
                "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"]))
    for name, child in (node.get("properties") or {}).items():
        causes += _rules(child, f"{path}.properties[{name}]")
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), Mapping):
            causes += _rules(node[key], f"{path}.{key}")
    return causes
