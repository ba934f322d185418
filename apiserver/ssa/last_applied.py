"""kubectl's client-side-apply annotation, as the server keeps it for the `kubectl` applier.

Upgrading: when `kubectl apply --server-side` (manager `kubectl`) conflicts only on fields that the
`kubectl.kubernetes.io/last-applied-configuration` annotation lists with the live value, the apply
goes through as if forced (kube's lastAppliedManager). Keeping it current: after a `kubectl` apply,
an existing annotation is rewritten to the new configuration (lastAppliedUpdater). Both are called
by `apply.apply`; kubectl itself then migrates the managers with a JSON patch of managedFields.
"""

from __future__ import annotations

import json
from typing import Any

from apiserver.ssa import fieldsets
from apiserver.ssa.updater import Engine

ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"
KUBECTL = "kubectl"
_ANNOTATIONS_LIMIT = 256 * 1024  # total annotation size kube accepts (ValidateAnnotationsSize)


def _annotation(obj: dict[str, Any]) -> str | None:
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    value = annotations.get(ANNOTATION)
    return value if isinstance(value, str) and value else None


def allowed_conflicts(live: dict[str, Any], engine: Engine) -> fieldsets.FieldSet | None:
    """Fields the annotation claims and the live object still holds unchanged, or None."""
    text = _annotation(live)
    if text is None:
        return None
    try:
        last = json.loads(text)
    except ValueError:
        return None
    if not isinstance(last, dict) or last.get("apiVersion") != live.get("apiVersion"):
        return None
    claimed = engine.field_set(last)
    difference = engine.compare(last, live)
    for changed in (difference.modified, difference.added, difference.removed):
        claimed = fieldsets.difference(claimed, changed)
    return claimed


def encode_config(config: dict[str, Any]) -> str:
    """The annotation's value for a configuration: itself without the annotation, as Go encodes it."""
    doc = json.loads(json.dumps(config))
    meta = doc.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    annotations.pop(ANNOTATION, None)
    if not annotations:
        meta.pop("annotations", None)
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    # encoding/json escapes these for HTML safety; kubectl's own annotations carry them so.
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return text + "\n"


def refresh(result: dict[str, Any], config: dict[str, Any]) -> None:
    """Rewrite an existing annotation on `result` to `config` (dropped if it would be too large)."""
    if _annotation(result) is None:
        return
    annotations = result["metadata"]["annotations"]
    annotations[ANNOTATION] = encode_config(config)
    if sum(len(k) + len(v) for k, v in annotations.items() if isinstance(v, str)) > _ANNOTATIONS_LIMIT:
        del annotations[ANNOTATION]
