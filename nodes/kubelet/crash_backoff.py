"""CrashLoopBackOff timing, as the kubelet's `doBackOff` over a flowcontrol.Backoff keeps it.

Per container (pod uid + name): the first exit restarts at once and arms a 10 s back-off; an exit
while armed waits out the back-off since that exit, and each restart after waiting doubles it, up
to 5 min. An entry idle for longer than twice the maximum starts over. `delay(key, finished)` says
how long to wait before restarting a container that finished at `finished` (loop seconds).
`pod_worker.py` calls it; the message text is the kubelet's (`message`).
"""

from __future__ import annotations

from dataclasses import dataclass

INITIAL = 10.0
MAXIMUM = 300.0


@dataclass
class _Entry:
    backoff: float
    last_update: float


class CrashBackoff:
    def __init__(self, initial: float = INITIAL, maximum: float = MAXIMUM) -> None:
        self.initial, self.maximum = initial, maximum
        self._entries: dict[str, _Entry] = {}

    def in_backoff(self, key: str, finished: float, now: float) -> float:
        """Seconds still to wait before restarting; 0 means restart now (and arm or grow the back-off)."""
        entry = self._entries.get(key)
        expired = entry is not None and finished - entry.last_update > 2 * self.maximum
        if entry is not None and not expired and now - finished < entry.backoff:
            return entry.backoff - (now - finished)
        self._next(key, finished)
        return 0.0

    def current(self, key: str) -> float:
        entry = self._entries.get(key)
        return entry.backoff if entry else self.initial

    def restore(self, key: str, backoff: float, last_update: float) -> None:
        self._entries[key] = _Entry(backoff, last_update)

    def forget(self, key: str) -> None:
        self._entries.pop(key, None)

    def _next(self, key: str, at: float) -> None:
        entry = self._entries.get(key)
        if entry is None or at - entry.last_update > 2 * self.maximum:
            self._entries[key] = _Entry(self.initial, at)
        else:
            entry.backoff = min(entry.backoff * 2, self.maximum)
            entry.last_update = at


def duration(seconds: float) -> str:
    """Go's time.Duration String() for whole seconds: 10s, 1m20s, 5m0s."""
    whole = int(round(seconds))
    minutes, secs = divmod(whole, 60)
    return f"{minutes}m{secs}s" if minutes else f"{secs}s"


def message(seconds: float, container: str, pod_name: str, namespace: str, uid: str) -> str:
    return f"back-off {duration(seconds)} restarting failed container={container} pod={pod_name}_{namespace}({uid})"
