"""`RuntimeView`: the read-only face of the simulated runtime, for the kubelet HTTP endpoint.

`nodes/server.py` (exec, attach, logs) gets one from `host.NodesHost.view`. It never mutates:
- `pods(node=None)` lists `PodInfo`s; `pod(namespace, name)` finds one (None if this process
  does not run it).
- `PodInfo.node`, `.pod_ip`, `.uid`, `.userns` (the kubelet's `userns` file shape, or None for
  host users: then the map is `0 0 4294967295`), `.containers` (names), `.container(name)`.
- `ContainerInfo.env` (a copy of the container's environment, device env included), `.state`
  ("waiting" | "running" | "terminated"), `.container_id`, `.restart_count`, and
  `.logs(previous=False)`: `LogLine(time, stream, text)` in order; `await .wait_for_more()` returns
  once a line is added or the state changes, for `logs -f` (re-read `.logs()` from where you were).
- `usage(node)`: who holds which user-namespace range on a node (`userns.Allocator.table()`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nodes.runtime.records import ContainerRecord, LogLine, PodRecord, Registry


@dataclass(frozen=True)
class ContainerInfo:
    _record: ContainerRecord

    @property
    def name(self) -> str:
        return self._record.name

    @property
    def env(self) -> dict[str, str]:
        return dict(self._record.env)

    @property
    def state(self) -> str:
        return self._record.state

    @property
    def container_id(self) -> str:
        return self._record.container_id

    @property
    def restart_count(self) -> int:
        return self._record.restart_count

    def logs(self, previous: bool = False) -> list[LogLine]:
        return list(self._record.previous_logs if previous else self._record.logs)

    async def wait_for_more(self) -> None:
        await self._record.changed.wait()


@dataclass(frozen=True)
class PodInfo:
    _record: PodRecord

    @property
    def uid(self) -> str:
        return self._record.uid

    @property
    def node(self) -> str:
        return self._record.node

    @property
    def pod_ip(self) -> str:
        return self._record.pod_ip

    @property
    def userns(self) -> dict[str, Any] | None:
        return self._record.userns

    @property
    def containers(self) -> list[str]:
        return list(self._record.containers)

    def container(self, name: str) -> ContainerInfo | None:
        record = self._record.containers.get(name)
        return None if record is None else ContainerInfo(record)


class RuntimeView:
    def __init__(self, registry: Registry, userns_tables: Callable[[str], list[dict[str, Any]]]) -> None:
        self._registry = registry
        self._userns_tables = userns_tables

    def pods(self, node: str | None = None) -> list[PodInfo]:
        return [PodInfo(r) for r in self._registry.by_uid.values() if node is None or r.node == node]

    def pod(self, namespace: str, name: str) -> PodInfo | None:
        record = self._registry.find(namespace, name)
        return None if record is None else PodInfo(record)

    def usage(self, node: str) -> list[dict[str, Any]]:
        return self._userns_tables(node)
