"""Cell formatting shared by the printers: ages, durations, label and selector text, containers.

Owns `human_duration` (upstream `duration.HumanDuration`), timestamp parsing, `since()` (upstream
`translateTimestampSince`, `<unknown>` when unset) and the small formatters many printers share
(`FormatLabels`, `FormatLabelSelector`, container names/images). Callers: the printer modules in
this package and `apiserver/tables.py`, which re-exports `human_duration`.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from apiserver import labels

_NS_PER_SECOND = 1_000_000_000
_NS_PER_MINUTE = 60 * _NS_PER_SECOND
_NS_PER_HOUR = 60 * _NS_PER_MINUTE


def human_duration(seconds: float) -> str:
    """Upstream `duration.HumanDuration`: about two significant figures of a duration."""
    ns = int(seconds * _NS_PER_SECOND)
    whole_seconds = int(ns / _NS_PER_SECOND)  # truncates toward zero, as Go's int() does
    # Up to two seconds in the future counts as now (clock skew between machines).
    if whole_seconds < -1:
        return "<invalid>"
    if whole_seconds < 0:
        return "0s"
    if whole_seconds < 60 * 2:
        return f"{whole_seconds}s"
    minutes = ns // _NS_PER_MINUTE
    if minutes < 10:
        s = (ns // _NS_PER_SECOND) % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = ns // _NS_PER_HOUR
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 (or MicroTime) timestamp as an aware datetime; None when unset or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        t = datetime.fromisoformat(value)
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def since(value: Any, now: datetime) -> str:
    """Upstream `translateTimestampSince`: the age of a timestamp, `<unknown>` when unset."""
    t = parse_time(value)
    if t is None:
        return "<unknown>"
    return human_duration((now - t).total_seconds())


def between(start: datetime, end: datetime) -> str:
    return human_duration((end - start).total_seconds())


def age(obj: dict[str, Any], now: datetime) -> str:
    return since(meta(obj).get("creationTimestamp"), now)


def meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


def name(obj: dict[str, Any]) -> str:
    return str(meta(obj).get("name", ""))


def dig(obj: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def integer(v: Any) -> int:
    """An int cell: Go prints the zero value for unset int fields."""
    try:
        return int(v or 0)
    except (TypeError, ValueError):
        return 0


def format_labels(mapping: dict[str, str] | None) -> str:
    """Upstream `labels.FormatLabels`: `k=v,...` sorted, or `<none>`."""
    return labels.format_set(mapping) or "<none>"


def label_selector(selector: dict[str, Any] | None) -> str:
    """`LabelSelectorAsSelector(sel).String()`, `<invalid>` when it does not convert."""
    try:
        return str(labels.from_label_selector(selector))
    except labels.SelectorError:
        return "<invalid>"


def format_label_selector(selector: dict[str, Any] | None) -> str:
    """Upstream `metav1.FormatLabelSelector`: the selector text, `<none>` if empty, `<error>` if bad."""
    try:
        text = str(labels.from_label_selector(selector))
    except labels.SelectorError:
        return "<error>"
    return text or "<none>"


def containers_cells(pod_spec: dict[str, Any] | None) -> tuple[str, str]:
    """Upstream `layoutContainerCells`: comma-joined container names and images."""
    containers = (pod_spec or {}).get("containers") or []
    return (
        ",".join(str(c.get("name", "")) for c in containers),
        ",".join(str(c.get("image", "")) for c in containers),
    )


def bool_text(v: bool) -> str:
    """Upstream `printBool`: True/False (as a string cell)."""
    return "True" if v else "False"


def list_with_more(items: list[str], total: int, limit: int = 3) -> str:
    """Upstream `listWithMoreString`: the first `limit` items, then `+ N more...`; `<unset>` if none."""
    text = ",".join(items[:limit])
    if total > limit:
        return f"{text} + {total - limit} more..."
    return text or "<unset>"


def condition(conditions: list[dict[str, Any]] | None, kind: str) -> dict[str, Any] | None:
    for c in conditions or []:
        if c.get("type") == kind:
            return c
    return None
