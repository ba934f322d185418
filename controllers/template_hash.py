"""The pod-template-hash: what names a Deployment's ReplicaSets and tells its revisions apart.

`compute(template, collision_count)`: FNV-32a over the template, then the collision count (as
upstream: four little-endian bytes padded to eight), the 32-bit sum printed in decimal and
passed through `safe_encode` (apimachinery's SafeEncodeString: no vowels, no look-alike digits).
Upstream hashes Go's spew dump of the typed template; haru hashes the template's canonical JSON
(sorted keys, no spaces), so the hash is stable here but not equal to a real cluster's.
`equal_ignoring_hash` is upstream's EqualIgnoreHash. Used by `deployment.py`.
"""

from __future__ import annotations

import copy
import json
from typing import Any

LABEL = "pod-template-hash"
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193


def fnv32a(data: bytes, value: int = _FNV_OFFSET) -> int:
    for byte in data:
        value = ((value ^ byte) * _FNV_PRIME) & 0xFFFFFFFF
    return value


def safe_encode(text: str) -> str:
    return "".join(_ALPHANUMS[ord(ch) % len(_ALPHANUMS)] for ch in text)


def compute(template: dict[str, Any] | None, collision_count: int | None = None) -> str:
    value = fnv32a(json.dumps(template or {}, sort_keys=True, separators=(",", ":")).encode())
    if collision_count is not None:
        value = fnv32a((collision_count & 0xFFFFFFFF).to_bytes(4, "little") + bytes(4), value)
    return safe_encode(str(value))


def without_hash(template: dict[str, Any] | None) -> dict[str, Any]:
    stripped = copy.deepcopy(template or {})
    labels = (stripped.get("metadata") or {}).get("labels")
    if labels is not None:
        labels.pop(LABEL, None)
        if not labels:
            del stripped["metadata"]["labels"]
    return stripped


def equal_ignoring_hash(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    return without_hash(a) == without_hash(b)
