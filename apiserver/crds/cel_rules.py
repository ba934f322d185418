"""`x-kubernetes-validations`: walk a custom resource with its schema and run each CEL rule.

Each rule runs with `self` bound to the value at its schema node and, on updates, `oldSelf` to
the correlated old value (same property, same map key, same list-map item); a rule that mentions
`oldSelf` (a transition rule) is skipped when there is no old value, unless `optionalOldSelf`.
Failures become field errors the way apiextensions-apiserver reports them: `message`, else
`messageExpression`, else `failed rule: <rule>`; `reason` picks the error type and `fieldPath`
the field. Expressions are compiled once by the one CEL environment (`admission.cel`).
Called by `strategy.py`; `crd_validation.py` uses `compile_error` at CRD create/update.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any, Mapping

from apiserver import validation
from apiserver.errors import field_error

Causes = list[dict[str, str]]
Node = Mapping[str, Any]

_OLD_SELF = re.compile(r"\boldSelf\b")


class CelUnavailable(RuntimeError):
    """The shared CEL environment (`admission.cel`) is not installed in this tree."""


@functools.cache
def _cel() -> Any:
    try:
        from admission import cel  # the one CEL environment of the project
    except ImportError as exc:  # pragma: no cover - depends on the other package being present
        raise CelUnavailable(f"admission.cel is not available: {exc}") from None
    return cel


@functools.cache
def _environment() -> Any:
    cel = _cel()
    return cel.Environment({"self": cel.DYN, "oldSelf": cel.DYN})


@functools.lru_cache(maxsize=4096)
def _program(text: str) -> Any:
    return _environment().compile(text)


def available() -> bool:
    try:
        _environment()
    except CelUnavailable:
        return False
    return True


def compile_error(text: str) -> str | None:
    """The compiler's message for a rule that does not compile, else None."""
    try:
        _program(text)
    except _cel().CompileError as exc:
        return str(exc)
    return None


def has_rules(node: Any) -> bool:
    if not isinstance(node, Mapping):
        return False
    if node.get("x-kubernetes-validations"):
        return True
    children = list((node.get("properties") or {}).values()) + [node.get("items"), node.get("additionalProperties")]
    return any(has_rules(c) for c in children)


NO_OLD = object()  # no old object: a create, or nothing to correlate with


def validate(value: Any, node: Node, old: Any = NO_OLD, path: str = "") -> Causes:
    """Every failing rule under `node` for `value` (and `old`, on update), as field causes."""
    causes: Causes = []
    _walk(value, node, old, path, causes)
    return causes


def _walk(value: Any, node: Node, old: Any, path: str, causes: Causes) -> None:
    if value is None:
        return
    for rule in node.get("x-kubernetes-validations") or ():
        _run(rule, value, node, old, path, causes)
    if isinstance(value, dict):
        props = node.get("properties") or {}
        extra = node.get("additionalProperties")
        for name, item in value.items():
            child = props.get(name, extra if name not in props else None)
            if isinstance(child, Mapping):
                old_item = old.get(name, NO_OLD) if isinstance(old, dict) else NO_OLD
                _walk(item, child, old_item, f"{path}.{name}" if path else name, causes)
    elif isinstance(value, list):
        items = node.get("items")
        if isinstance(items, Mapping):
            correlate = _correlator(node, old)
            for index, item in enumerate(value):
                _walk(item, items, correlate(item), f"{path}[{index}]", causes)


def _correlator(node: Node, old: Any) -> Any:
    """How list items find their old selves: by map keys, by value for sets, not at all otherwise."""
    if not isinstance(old, list):
        return lambda item: NO_OLD
    list_type = node.get("x-kubernetes-list-type")
    if list_type == "map":
        keys = list(node.get("x-kubernetes-list-map-keys") or ())
        by_key = {json.dumps([o.get(k) for k in keys]): o for o in old if isinstance(o, dict)}
        return lambda item: by_key.get(json.dumps([item.get(k) for k in keys]), NO_OLD) \
            if isinstance(item, dict) else NO_OLD
    if list_type == "set":
        members = {json.dumps(o, sort_keys=True) for o in old}
        return lambda item: item if json.dumps(item, sort_keys=True) in members else NO_OLD
    return lambda item: NO_OLD


def _rule_text(rule: Mapping[str, Any]) -> str:
    if rule.get("message", "").strip():
        return str(rule["message"]).strip()
    return f"failed rule: {str(rule.get('rule', '')).strip()}"


def _run(rule: Mapping[str, Any], value: Any, node: Node, old: Any, path: str, causes: Causes) -> None:
    text = str(rule.get("rule", ""))
    transition = bool(_OLD_SELF.search(text))
    if transition and old is NO_OLD and not rule.get("optionalOldSelf"):
        return
    type_word = node.get("type") or ("integer-or-string" if node.get("x-kubernetes-int-or-string") else "")
    activation = {"self": value}
    if transition:
        activation["oldSelf"] = None if old is NO_OLD else old
    try:
        result = _program(text).evaluate(activation)
    except _cel().CelError as exc:  # no such key, overflow, no matching overload, cost limits...
        causes.append(validation.invalid(path, type_word, f"{exc} evaluating rule: {_rule_text(rule)}"))
        return
    if result is True:
        return
    where = path
    field_path = str(rule.get("fieldPath") or "").lstrip(".")
    if field_path:
        where = f"{path}.{field_path}" if path else field_path
    causes.append(_failure(where, type_word, _detail(rule, activation), rule.get("reason")))


def _detail(rule: Mapping[str, Any], activation: dict[str, Any]) -> str:
    """messageExpression when it yields a non-empty string, else message, else `failed rule: …`."""
    expression = rule.get("messageExpression")
    if expression:
        try:
            text = _program(str(expression)).evaluate(activation)
        except _cel().CelError:  # upstream falls back to the static text when the message fails
            text = None
        if isinstance(text, str) and text.strip():
            return text.strip()
    return _rule_text(rule)


def _failure(path: str, type_word: str, detail: str, reason: str | None) -> dict[str, str]:
    if reason == "FieldValueForbidden":
        return validation.forbidden(path, detail)
    if reason == "FieldValueRequired":
        return validation.required(path, detail)
    if reason == "FieldValueDuplicate":
        return field_error("FieldValueDuplicate", path, f'Duplicate value: "{type_word}"')
    return validation.invalid(path, type_word, detail)
