"""One decode of a watch event's stored bytes, shared by every watcher that must look inside it.

A watch with a label or field selector has to decode each event to match it (and the previous
object of a MODIFIED, to tell an object leaving the selection). With a scheduler, the
controllers and one kubelet per node watching pods through selectors, the same bytes were
decoded once per watcher; the watchers of one commit read the very same `Event` from the watch
ring (`storage/watch_hub.py`), so the bytes object itself is the key. The objects handed out are
shared: callers only read them (`handlers/watch.py` matches selectors on them and sends the
stored bytes, decoding a private copy for anything it changes).
"""

from __future__ import annotations

from typing import Any

import msgspec

# Watchers of one commit run one after another within a few loop turns: a small table suffices.
CAPACITY = 2048

_decoded: dict[int, tuple[bytes, Any]] = {}


def shared(value: bytes) -> Any:
    """`value` decoded, the same object for the same bytes object; never modify it."""
    found = _decoded.get(id(value))
    if found is not None and found[0] is value:
        return found[1]
    obj = msgspec.json.decode(value)
    if len(_decoded) >= CAPACITY:
        _decoded.clear()
    _decoded[id(value)] = (value, obj)  # holding `value` keeps its id from being reused meanwhile
    return obj
