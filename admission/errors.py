"""How an admission plugin says no: `Rejection`, a Status the API server sends as it is.

    Rejection(code, reason, message, details)
    ├── forbidden(attrs, why)   403 Forbidden, `pods "x" is forbidden: why` (admission.NewForbidden)
    └── any code/reason a plugin sets (VAP denials carry 422 Invalid or the validation's reason)
    PatchFailed                 a mutation that cannot be applied; the policy's failurePolicy decides

`apiserver/admitting.py` turns a Rejection into its `errors.APIError`; nothing here knows HTTP.
"""

from __future__ import annotations

from typing import Any

from admission.attributes import Attributes


class Rejection(Exception):
    """The request is refused; code, reason, message and details are the Status fields. `retry`
    says the answer may change in a moment (something a controller creates is missing): the
    server may run admission again before it answers."""

    def __init__(self, code: int, reason: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.retry = False


class PatchFailed(Exception):
    """A JSON patch or apply configuration that does not apply; `.message` is the patch library's text."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def qualified_resource(attrs: Attributes) -> str:
    return f"{attrs.resource}.{attrs.group}" if attrs.group else attrs.resource


def details_for(attrs: Attributes) -> dict[str, Any]:
    details: dict[str, Any] = {"name": attrs.display_name()}
    if attrs.group:
        details["group"] = attrs.group
    details["kind"] = attrs.resource
    return details


def forbidden(attrs: Attributes, why: str) -> Rejection:
    """403 with `<resource> "<name>" is forbidden: <why>`, as admission.NewForbidden builds it."""
    return Rejection(403, "Forbidden", f'{qualified_resource(attrs)} "{attrs.display_name()}" is forbidden: {why}',
                     details_for(attrs))


def aggregate(messages: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message as is, several as "[a, b]"."""
    if len(messages) == 1:
        return messages[0]
    return "[" + ", ".join(messages) + "]"
