"""The five status conditions the namespace controller keeps on a Terminating namespace.

Types, reasons and message texts are upstream's (pkg/controller/namespace/deletion/
status_condition_utils.go): each condition is True with a reason saying what is wrong, or False
with its "all is well" reason and message. `Content` is what one deletion pass learned;
`conditions(content)` turns it into the wanted set and `merge(old, new)` keeps lastTransitionTime
unless a status flips. Called by `namespace.py`, which writes the result with PUT .../status.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

DISCOVERY_FAILURE = "NamespaceDeletionDiscoveryFailure"
GROUP_VERSION_PARSING_FAILURE = "NamespaceDeletionGroupVersionParsingFailure"
CONTENT_FAILURE = "NamespaceDeletionContentFailure"
CONTENT_REMAINING = "NamespaceContentRemaining"
FINALIZERS_REMAINING = "NamespaceFinalizersRemaining"
TYPES = (DISCOVERY_FAILURE, GROUP_VERSION_PARSING_FAILURE, CONTENT_FAILURE, CONTENT_REMAINING, FINALIZERS_REMAINING)

_ALL_WELL = {
    DISCOVERY_FAILURE: ("ResourcesDiscovered", "All resources successfully discovered"),
    GROUP_VERSION_PARSING_FAILURE: ("ParsedGroupVersions", "All legacy kube types successfully parsed"),
    CONTENT_FAILURE: ("ContentDeleted", "All content successfully deleted, may be waiting on finalization"),
    CONTENT_REMAINING: ("ContentRemoved", "All content successfully removed"),
    FINALIZERS_REMAINING: ("ContentHasNoFinalizers", "All content-preserving finalizers finished"),
}


@dataclass
class Content:
    """What one pass over a namespace's content found."""

    discovery_failures: dict[str, str] = field(default_factory=dict)  # group version → error
    delete_errors: list[str] = field(default_factory=list)
    remaining: Counter[str] = field(default_factory=Counter)  # "pods." / "widgets.example.com" → count
    finalizers: Counter[str] = field(default_factory=Counter)  # finalizer → objects holding it

    @property
    def done(self) -> bool:
        return not (self.discovery_failures or self.delete_errors or self.remaining)


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _condition(kind: str, status: str, reason: str, message: str) -> dict[str, Any]:
    return {"type": kind, "status": status, "lastTransitionTime": now(), "reason": reason, "message": message}


def conditions(content: Content) -> list[dict[str, Any]]:
    wanted: dict[str, dict[str, Any]] = {}
    if content.discovery_failures:
        failing = ", ".join(f"{gv}: {err}" for gv, err in sorted(content.discovery_failures.items()))
        wanted[DISCOVERY_FAILURE] = _condition(
            DISCOVERY_FAILURE, "True", "DiscoveryFailed",
            f"Discovery failed for some groups, {len(content.discovery_failures)} failing: {failing}")
    if content.delete_errors:
        wanted[CONTENT_FAILURE] = _condition(
            CONTENT_FAILURE, "True", "ContentDeletionFailed",
            f"Failed to delete all resource types, {len(content.delete_errors)} remaining: "
            f"{', '.join(sorted(content.delete_errors))}")
    if content.remaining:
        parts = sorted(f"{resource} has {count} resource instances" for resource, count in content.remaining.items())
        wanted[CONTENT_REMAINING] = _condition(CONTENT_REMAINING, "True", "SomeResourcesRemain",
                                               f"Some resources are remaining: {', '.join(parts)}")
    if content.finalizers:
        parts = sorted(f"{name} in {count} resource instances" for name, count in content.finalizers.items())
        wanted[FINALIZERS_REMAINING] = _condition(
            FINALIZERS_REMAINING, "True", "SomeFinalizersRemain",
            f"Some content in the namespace has finalizers remaining: {', '.join(parts)}")
    for kind in TYPES:
        if kind not in wanted:
            reason, message = _ALL_WELL[kind]
            wanted[kind] = _condition(kind, "False", reason, message)
    return [wanted[kind] for kind in TYPES]


def merge(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], bool]:
    """Conditions to write and whether anything changed; a condition keeps its transition time
    unless its status flips, and conditions of other types are left alone."""
    merged = [dict(c) for c in old]
    changed = False
    for wanted in new:
        current = next((c for c in merged if c.get("type") == wanted["type"]), None)
        if current is None:
            merged.append(wanted)
            changed = True
            continue
        if any(current.get(k) != wanted[k] for k in ("status", "reason", "message")):
            if current.get("status") != wanted["status"]:
                current["lastTransitionTime"] = wanted["lastTransitionTime"]
            current.update(status=wanted["status"], reason=wanted["reason"], message=wanted["message"])
            changed = True
    return merged, changed
