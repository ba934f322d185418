"""CRD names: whether they clash within their group, and the conditions that say so.

Upstream's naming controller: a CRD's plural, singular and short names must not be a resource
name (plural, singular or short name) of another CRD of the same group, and its kind and list
kind must not be another's kind or list kind; built-in resources of the group count too. The
first clash found gives `NamesAccepted=False` with reason PluralConflict, SingularConflict,
ShortNamesConflict, KindConflict or ListKindConflict and `"x" is already in use`; otherwise
`NoConflicts`, and `Established` follows. Called by `controller.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from apiserver import registry as registry_module


@dataclass(frozen=True)
class Verdict:
    accepted: bool
    reason: str
    message: str


def _names(crd: dict[str, Any]) -> dict[str, Any]:
    return ((crd.get("status") or {}).get("acceptedNames") or {})


def check(crd: dict[str, Any], others: list[dict[str, Any]], registry: registry_module.Registry) -> Verdict:
    spec = crd.get("spec") or {}
    group = spec.get("group", "")
    wanted = spec.get("names") or {}
    resources: set[str] = set()
    kinds: set[str] = set()
    for other in others:
        if (other.get("spec") or {}).get("group") != group:
            continue
        names = _names(other)
        resources.update(n for n in (names.get("plural"), names.get("singular")) if n)
        resources.update(names.get("shortNames") or ())
        kinds.update(n for n in (names.get("kind"), names.get("listKind")) if n)
    for info in registry.all():
        if info.group == group and info.builtin:
            resources.update((info.resource, info.singular, *info.short_names))
            kinds.update((info.kind, info.list_kind))
    checks = [("PluralConflict", [wanted.get("plural")], resources),
              ("SingularConflict", [wanted.get("singular")], resources),
              ("ShortNamesConflict", list(wanted.get("shortNames") or ()), resources),
              ("KindConflict", [wanted.get("kind")], kinds),
              ("ListKindConflict", [wanted.get("listKind")], kinds)]
    for reason, values, taken in checks:
        for value in values:
            if value and value in taken:
                return Verdict(False, reason, f'"{value}" is already in use')
    return Verdict(True, "NoConflicts", "no conflicts found")


def set_condition(status: dict[str, Any], kind: str, value: str, reason: str, message: str, now: str) -> None:
    """Set one condition; lastTransitionTime moves only when the status value changes."""
    conditions = status.setdefault("conditions", [])
    for condition in conditions:
        if condition.get("type") == kind:
            if condition.get("status") != value:
                condition["lastTransitionTime"] = now
            condition.update({"status": value, "reason": reason, "message": message})
            return
    conditions.append({"type": kind, "status": value, "lastTransitionTime": now, "reason": reason,
                       "message": message})


def apply(status: dict[str, Any], crd: dict[str, Any], verdict: Verdict, now: str) -> None:
    """Write the verdict into a CRD status: acceptedNames, NamesAccepted, Established."""
    set_condition(status, "NamesAccepted", "True" if verdict.accepted else "False", verdict.reason,
                  verdict.message, now)
    if verdict.accepted:
        names = dict((crd.get("spec") or {}).get("names") or {})
        accepted = {k: names[k] for k in ("plural", "singular", "shortNames", "kind", "listKind", "categories")
                    if names.get(k)}
        status["acceptedNames"] = accepted
        set_condition(status, "Established", "True", "InitialNamesAccepted", "the initial names have been accepted",
                      now)
    else:
        status.setdefault("acceptedNames", {"kind": "", "plural": ""})
        established = next((c for c in status["conditions"] if c.get("type") == "Established"), None)
        if established is None or established.get("status") != "True":
            set_condition(status, "Established", "False", "NotAccepted", "not all names are accepted", now)
