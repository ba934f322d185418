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
    def __init__(self, cidr: str) -> None:
        network = ipaddress.ip_network(cidr)
        self._free = [str(ip) for ip in list(network.hosts())[1:]]
        self._order = {ip: i for i, ip in enumerate(self._free)}
        self._by_pod: dict[str, str] = {}
        self._taken: set[str] = set()

    def allocate(self, pod_uid: str) -> str:
        if pod_uid in self._by_pod:
            return self._by_pod[pod_uid]
        for ip in self._free:
            if ip not in self._taken:
                self._taken.add(ip)
                self._by_pod[pod_uid] = ip
                return ip
        raise Exhausted("no IP addresses available in range set")

    def restore(self, pod_uid: str, ip: str) -> None:
        if ip in self._order and ip not in self._taken:
            self._taken.add(ip)
            self._by_pod[pod_uid] = ip

    def release(self, pod_uid: str) -> None:
        ip = self._by_pod.pop(pod_uid, None)
        if ip is not None:
            self._taken.discard(ip)
