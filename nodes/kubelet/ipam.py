"""Pod IPs from the node's podCIDR, as a host-local CNI plugin hands them out.

The first address is the bridge gateway; pods get the lowest free address after it and give it
back when their sandbox goes (the pod finished or was deleted). `restore` takes back a running
pod's recorded IP after a restart. Used by `pod_worker.py`; pure and synchronous.
"""

from __future__ import annotations

import ipaddress


class Exhausted(Exception):
    pass


class PodIPs:
    # Addresses are kept as integers and only the taken ones are stored: a list of the 253 free
    # strings of a /24 (and its index) cost about 24 KB per node, a third of a hollow node's RSS.
    def __init__(self, cidr: str) -> None:
        network = ipaddress.ip_network(cidr)
        self._version = network.version
        first, last = int(network.network_address), int(network.broadcast_address)
        if network.num_addresses > 2:  # as network.hosts(): no network address, no IPv4 broadcast
            first, last = first + 1, (last - 1 if network.version == 4 else last)
        self._first, self._last = first + 1, last  # the first host is the bridge gateway
        self._by_pod: dict[str, int] = {}
        self._taken: set[int] = set()

    def allocate(self, pod_uid: str) -> str:
        if pod_uid in self._by_pod:
            return self._text(self._by_pod[pod_uid])
        for ip in range(self._first, self._last + 1):
            if ip not in self._taken:
                self._taken.add(ip)
                self._by_pod[pod_uid] = ip
                return self._text(ip)
        raise Exhausted("no IP addresses available in range set")

    def restore(self, pod_uid: str, ip: str) -> None:
        try:
            address = ipaddress.ip_address(ip)
        except ValueError:
            return
        value = int(address)
        if address.version == self._version and self._first <= value <= self._last and value not in self._taken:
            self._taken.add(value)
            self._by_pod[pod_uid] = value

    def release(self, pod_uid: str) -> None:
        ip = self._by_pod.pop(pod_uid, None)
        if ip is not None:
            self._taken.discard(ip)

    def _text(self, value: int) -> str:
        return str(ipaddress.ip_address(value) if self._version == 4 else ipaddress.IPv6Address(value))
