"""`ConfigError` and `FieldError`: why a KubeSchedulerConfiguration file was refused, in upstream's words.

`FieldError` renders as apimachinery's `field.Error` does (`profiles[0].schedulerName: Required
value`); `ConfigError` carries the whole message kube-scheduler would print, one or several field
errors joined as an `utilerrors.Aggregate` joins them. `decoding.py`, `validation.py`,
`plugin_args.py` and `expansion.py` raise it; `python -m scheduler --config` prints it and exits 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

PREFIX = "couldn't create scheduler: "


class GoLiteral(str):
    """A value already spelled as Go prints it (`[]string{"a"}`, a struct's %#v); shown as is."""


def go_strings(values: list[str]) -> GoLiteral:
    """A []string as %#v prints it."""
    return GoLiteral("[]string{" + ", ".join(go_value(v) for v in values) + "}")


def go_value(value: Any) -> str:
    """A value as Go's %v / %q shows it in field errors: strings quoted, numbers bare."""
    if isinstance(value, GoLiteral):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return msgspec.json.encode(value).decode()
    if isinstance(value, (int, float)):
        return str(value)
    if value is None:
        return "null"
    return msgspec.json.encode(value).decode()


@dataclass
class FieldError:
    """One `field.Error`: its path, its type and the detail after the value."""

    path: str
    type: str  # "Invalid value", "Required value", "Duplicate value", "Unsupported value", "Forbidden"
    value: Any = None
    detail: str = ""
    supported: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        body = self.type
        if self.type in ("Invalid value", "Duplicate value"):
            body += f": {go_value(self.value)}"
        elif self.type == "Unsupported value":
            body += f": {go_value(self.value)}"
            if self.supported:
                body += ": supported values: " + ", ".join(go_value(s) for s in self.supported)
        if self.detail:
            body += f": {self.detail}"
        return f"{self.path}: {body}" if self.path else body


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(path, "Invalid value", value, detail)


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(path, "Required value", detail=detail)


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError(path, "Duplicate value", value)


def not_supported(path: str, value: Any, supported: list[str]) -> FieldError:
    return FieldError(path, "Unsupported value", value, supported=list(supported))


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(path, "Forbidden", detail=detail)


def aggregate(messages: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message alone, several in brackets, repeats once."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


class ConfigError(Exception):
    """A configuration kube-scheduler would refuse; `str()` is the line it prints."""

    def __init__(self, message: str, errors: list[FieldError] | None = None) -> None:
        super().__init__(PREFIX + message)
        self.message = message
        self.errors = list(errors or [])

    @classmethod
    def of(cls, errors: list[FieldError]) -> "ConfigError":
        return cls(aggregate([str(e) for e in errors]), errors)
