"""An apply's conflicts as the 409 Status kube sends, one cause per field and manager.

`Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.a`, or for
several: `Apply failed with 2 conflicts: conflicts with "a":\\n- .x\\n- .y` (managers sorted). The
causes are `{"type": "FieldManagerConflict", "message": "conflict with …", "field": ".data.a"}`;
details carry only the causes, as errors.NewApplyConflict does. Raised by `apply.apply`.
"""

from __future__ import annotations

from typing import NamedTuple

from apiserver import errors


class Conflict(NamedTuple):
    field: str          # rendered path, e.g. `.spec.replicas`
    manager: str
    api_version: str
    operation: str = "Update"
    subresource: str = ""

    def described(self) -> str:
        text = f'"{self.manager}"'
        if self.subresource:
            text += f' with subresource "{self.subresource}"'
        if self.operation == "Update":
            text += f" using {self.api_version}"
        return text


class ConflictError(errors.APIError):
    def __init__(self, conflicts: list[Conflict] | list[tuple[str, str, str]]) -> None:
        self.conflicts = [c if isinstance(c, Conflict) else Conflict(*c) for c in conflicts]
        causes = [{"type": "FieldManagerConflict", "message": f"conflict with {c.described()}", "field": c.field}
                  for c in self.conflicts]
        super().__init__(409, "Conflict", _message(self.conflicts), {"causes": causes})


def _message(conflicts: list[Conflict]) -> str:
    if len(conflicts) == 1:
        only = conflicts[0]
        return f"Apply failed with 1 conflict: conflict with {only.described()}: {only.field}"
    by_manager: dict[tuple[str, str, str, str], list[Conflict]] = {}
    for conflict in conflicts:
        key = (conflict.manager, conflict.operation, conflict.api_version, conflict.subresource)
        by_manager.setdefault(key, []).append(conflict)
    lines = []
    for key in sorted(by_manager):
        group = by_manager[key]
        lines.append(f"conflicts with {group[0].described()}:")
        lines.extend(f"- {c.field}" for c in group)
    return f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
