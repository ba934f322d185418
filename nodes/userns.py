"""User-namespace ID blocks for `hostUsers: false` pods, as the kubelet's userns manager hands them out.

A node owns host IDs [65536, 65536 + blocks × idsPerPod). Each pod gets one block of `ids_per_pod`
(65536 by default): a multiple of the block size, lowest free first, never shared; it is released
when the pod goes. Running out raises `Exhausted` with the kubelet's text. `restore(uid, base)`
re-derives a block from a pod's recorded mapping after a restart, refusing ranges it does not
own or that another pod holds. Pure and synchronous: the kubelet (`kubelet/pod_worker.py`) calls it
and keeps each pod's mapping in its runtime record and checkpoint (`mapping(...)` is that data).
"""

from __future__ import annotations

from typing import Any

UNIT = 65536  # the kubelet's userNsUnitLength: idsPerPod must be a multiple of it


class Exhausted(Exception):
    def __init__(self) -> None:
        super().__init__("could not find an empty slot to allocate a user namespace")


class Allocator:
    def __init__(self, blocks: int, ids_per_pod: int = UNIT) -> None:
        if ids_per_pod <= 0 or ids_per_pod % UNIT:
            raise ValueError(f"kubelet user namespace length {ids_per_pod} is not a multiple of {UNIT}")
        if blocks <= 0:
            raise ValueError("a node needs at least one user namespace block")
        self.ids_per_pod = ids_per_pod
        self.first = ids_per_pod  # host ID 0..length-1 is never mapped: it would circumvent the isolation
        self.blocks = blocks
        self._by_pod: dict[str, int] = {}  # pod uid → block index
        self._taken: set[int] = set()

    def allocate(self, pod_uid: str) -> int:
        """The host ID the pod's container ID 0 maps to; the same answer again for the same pod."""
        if pod_uid in self._by_pod:
            return self._base(self._by_pod[pod_uid])
        for index in range(self.blocks):
            if index not in self._taken:
                self._taken.add(index)
                self._by_pod[pod_uid] = index
                return self._base(index)
        raise Exhausted()

    def restore(self, pod_uid: str, base: int, length: int) -> None:
        if length != self.ids_per_pod:
            raise ValueError(f"wrong user namespace length {length}")
        if base % self.ids_per_pod:
            raise ValueError(f"wrong user namespace offset specified {base}")
        index = (base - self.first) // self.ids_per_pod
        if not 0 <= index < self.blocks:
            raise ValueError(f"id {base} is out of range")
        held = self._by_pod.get(pod_uid)
        if held is not None:
            if held != index:
                raise ValueError(f'different user namespace range already used by pod "{pod_uid}"')
            return
        if index in self._taken:
            raise ValueError(f'range picked for pod "{pod_uid}" already taken')
        self._taken.add(index)
        self._by_pod[pod_uid] = index

    def release(self, pod_uid: str) -> None:
        index = self._by_pod.pop(pod_uid, None)
        if index is not None:
            self._taken.discard(index)

    def base_of(self, pod_uid: str) -> int | None:
        index = self._by_pod.get(pod_uid)
        return None if index is None else self._base(index)

    def table(self) -> list[dict[str, Any]]:
        """Who holds which range, lowest first: what `haru nodes userns` and the kubelet endpoint show."""
        rows = sorted((index, uid) for uid, index in self._by_pod.items())
        return [{"podUID": uid, "hostID": self._base(i), "length": self.ids_per_pod} for i, uid in rows]

    def _base(self, index: int) -> int:
        return self.first + index * self.ids_per_pod


def mapping(base: int | None, length: int = UNIT) -> dict[str, list[dict[str, int]]]:
    """The kubelet's `userns` file shape; a host-users pod (base None) maps the whole ID space 1:1."""
    if base is None:
        entry = {"containerId": 0, "hostId": 0, "length": 4294967295}
    else:
        entry = {"containerId": 0, "hostId": base, "length": length}
    return {"uidMappings": [dict(entry)], "gidMappings": [dict(entry)]}
