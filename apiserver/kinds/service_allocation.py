"""Service cluster IPs and node ports: pure choices from a range, given what is already in use.

The caller owns the state (the set of addresses and ports in use, built from stored Services);
these functions only pick or check. Ranges are kube-apiserver's defaults here:
--service-cluster-ip-range 10.96.0.0/12 and --service-node-port-range 30000-32767. As upstream's
bitmap allocators do, dynamic choices come from above a small static band first (256 addresses,
86 ports) so that hand-picked values stay free; within a band the lowest free value is taken
(upstream picks at random). Error texts are ipallocator's and portallocator's.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/12")
NODE_PORT_MIN, NODE_PORT_MAX = 30000, 32767
_IP_STATIC_BAND = 256
_PORT_STATIC_BAND = 86


def _band_offset(size: int, minimum: int, maximum: int, step: int) -> int:
    return max(minimum, min(maximum, size // step))


def cluster_ip_error(ip: str, used: Iterable[str], cidr: ipaddress.IPv4Network = SERVICE_CIDR) -> str:
    """Why a requested cluster IP cannot be had; "" when it can."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return f"the provided IP ({ip}) is not in the valid range. The range of valid IPs is {cidr}"
    if address not in cidr or address in (cidr.network_address, cidr.broadcast_address):
        return f"the provided IP ({ip}) is not in the valid range. The range of valid IPs is {cidr}"
    if ip in set(used):
        return "provided IP is already allocated"
    return ""


def allocate_cluster_ip(used: Iterable[str], cidr: ipaddress.IPv4Network = SERVICE_CIDR) -> str | None:
    """A free address of `cidr` (never its network or broadcast address); None when it is full."""
    taken = {int(ipaddress.ip_address(ip)) for ip in used if ip and ip != "None"}
    first, size = int(cidr.network_address) + 1, cidr.num_addresses - 2
    offset = _band_offset(size, 16, _IP_STATIC_BAND, 16)
    for start, stop in ((offset, size), (0, offset)):
        for index in range(start, stop):
            if first + index not in taken:
                return str(ipaddress.ip_address(first + index))
    return None


def node_port_error(port: int, used: Iterable[int]) -> str:
    if not NODE_PORT_MIN <= port <= NODE_PORT_MAX:
        return f"provided port is not in the valid range. The range of valid ports is {NODE_PORT_MIN}-{NODE_PORT_MAX}"
    if port in set(used):
        return "provided port is already allocated"
    return ""


def allocate_node_port(used: Iterable[int]) -> int | None:
    taken = set(used)
    size = NODE_PORT_MAX - NODE_PORT_MIN + 1
    offset = _band_offset(size, 16, 128, 32)
    for start, stop in ((offset, size), (0, offset)):
        for index in range(start, stop):
            if NODE_PORT_MIN + index not in taken:
                return NODE_PORT_MIN + index
    return None
