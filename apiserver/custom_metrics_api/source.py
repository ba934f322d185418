"""Where the custom and external metric values come from: things a test (or a user) writes.

Custom metrics (Object and Pods metrics): the annotation `metrics.haru.dev/<metric>: "<quantity>"`
on the described object itself, a Deployment or each Pod. External metrics: the ConfigMap
`haru-metrics` in the namespace asked about, one key per metric whose value is a quantity (one
series without labels) or a JSON list of `{"labels": {...}, "value": "<quantity>"}` series. A value
that is not a quantity is no value (the adapter finds no metric). Read by `serving.py`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from admission import quantities

ANNOTATION_PREFIX = "metrics.haru.dev/"
CONFIGMAP = "haru-metrics"


@dataclass(frozen=True)
class Series:
    value: quantities.Quantity
    labels: dict[str, str] = field(default_factory=dict)


def annotated(obj: dict[str, Any], metric: str) -> quantities.Quantity | None:
    """The custom metric `metric` of one object, from its annotation."""
    text = ((obj.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_PREFIX + metric)
    return None if text is None else quantities.parse_or_none(text.strip())


def annotated_names(obj: dict[str, Any]) -> set[str]:
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return {k[len(ANNOTATION_PREFIX):] for k in annotations if k.startswith(ANNOTATION_PREFIX)}


def external(configmap: dict[str, Any] | None, metric: str) -> list[Series]:
    """The series of external metric `metric` in a namespace's `haru-metrics` ConfigMap."""
    text = ((configmap or {}).get("data") or {}).get(metric)
    if text is None:
        return []
    text = text.strip()
    if not text.startswith("["):
        value = quantities.parse_or_none(text)
        return [] if value is None else [Series(value)]
    try:
        entries = json.loads(text)
    except ValueError:
        return []
    found = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        value = quantities.parse_or_none(entry.get("value"))
        labels = entry.get("labels") or {}
        if value is not None and isinstance(labels, dict):
            found.append(Series(value, {str(k): str(v) for k, v in labels.items()}))
    return found
