"""Service cluster IPs and node ports: what is in use, and reservations for writes in flight.

Strategies that allocate (the Service strategy's `allocate`) are given the values stored services
hold plus those reserved by writes that have not committed yet, so two concurrent creates never
get the same address. A write reserves in `writing.prepare_*` and releases in its handler's
`finally` (`release`), committed or not: once committed, the stored object itself holds the value.
"""

from __future__ import annotations

from typing import Any

from apiserver import responses
from apiserver.context import Endpoint
from apiserver.kinds import service

_RESERVED = "allocations_reserved"  # Server.extra: storage key → (ips, ports) of writes in flight


def _reserved(ep: Endpoint) -> dict[str, tuple[set[str], set[int]]]:
    return ep.server.extra.setdefault(_RESERVED, {})


def allocate(ep: Endpoint, obj: dict[str, Any], old: dict[str, Any] | None) -> list[dict[str, str]]:
    """Let the strategy fill in allocated values; returns its Invalid causes."""
    allocate_hook = getattr(ep.strategy, "allocate", None)
    if allocate_hook is None:
        return []
    stored = [responses.decode(r.value) for r in ep.server.store.list(ep.resource.key_prefix).records]
    ips, ports = service.used_values(stored)
    key = ep.key(obj["metadata"]["name"])
    for other, (held_ips, held_ports) in _reserved(ep).items():
        if other != key:
            ips |= held_ips
            ports |= held_ports
    causes = allocate_hook(obj, used_cluster_ips=ips, used_node_ports=ports, old=old)
    if not causes:
        _reserved(ep)[key] = service.used_values([obj])
    return causes


def release(ep: Endpoint, name: str) -> None:
    if name:
        _reserved(ep).pop(ep.key(name), None)
