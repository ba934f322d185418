"""A readable diff of two JSON values, for the messages that upstream ends with a cmp.Diff.

Upstream appends go-cmp's rendering of the internal Go structs after "pod updates may not change
fields other than …", "existing ephemeral containers … may not be changed" and the PVC spec
rule. That text cannot be reproduced from JSON; this lists each changed path as `-`/`+` lines
instead. Clients match on the sentence before the newline, which is exact.
"""

from __future__ import annotations

import json
from typing import Any


def _render(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _walk(old: Any, new: Any, path: str, lines: list[str]) -> None:
    if old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            _walk(old.get(key), new.get(key), f"{path}.{key}" if path else key, lines)
        return
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new)):
            _walk(a, b, f"{path}[{i}]", lines)
        return
    if old is not None:
        lines.append(f"- {path}: {_render(old)}")
    if new is not None:
        lines.append(f"+ {path}: {_render(new)}")


def diff(old: Any, new: Any, root: str = "") -> str:
    lines: list[str] = []
    _walk(old, new, root, lines)
    return "\n".join(lines)
