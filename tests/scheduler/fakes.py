"""A `Handle` for plugin tests: a snapshot built from node and pod dicts, stores filled by hand,
and an event recorder that keeps what it is told. No API server, no framework around it."""

from __future__ import annotations

from typing import Any

from client import cache
from client.resources import Resource
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.node_info import NodeInfo, PodInfo
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.status import Status

Obj = dict[str, Any]


def node(name: str, *, cpu: str = "4", memory: str = "16Gi", pods: str = "110", labels: dict[str, str] | None = None,
         taints: list[Obj] | None = None, unschedulable: bool = False, extra: dict[str, Any] | None = None) -> Obj:
    allocatable = {"cpu": cpu, "memory": memory, "pods": pods, **(extra or {})}
    spec: Obj = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": f"uid-{name}", "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": spec, "status": {"allocatable": allocatable, "capacity": dict(allocatable)}}


def pod(name: str, *, namespace: str = "default", requests: dict[str, Any] | None = None, node_name: str = "",
        labels: dict[str, str] | None = None, priority: int = 0, spec: dict[str, Any] | None = None) -> Obj:
    container: Obj = {"name": "c", "image": "busybox"}
    if requests:
        container["resources"] = {"requests": requests}
    body: Obj = {"containers": [container], "priority": priority, **(spec or {})}
    if node_name:
        body["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}", "labels": labels or {}},
            "spec": body, "status": {"phase": "Pending"}}


def node_infos(nodes: list[Obj], pods: list[Obj] = ()) -> list[NodeInfo]:  # type: ignore[assignment]
    infos = {}
    for n in nodes:
        info = NodeInfo()
        info.set_node(n)
        infos[n["metadata"]["name"]] = info
    for p in pods:
        target = infos.get(p["spec"].get("nodeName", ""))
        if target is not None:
            target.add_pod(PodInfo.of(p))
    return list(infos.values())


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str, str]] = []

    def event(self, regarding: Obj, type_: str, reason: str, message: str, action: str = "") -> None:
        self.events.append((regarding["metadata"]["name"], type_, reason, message))


class FakeHandle:
    profile_name = "default-scheduler"

    def __init__(self, nodes: list[Obj] = (), pods: list[Obj] = (), *,  # type: ignore[assignment]
                 stores: dict[Resource, list[Obj]] | None = None) -> None:
        self.client: Any = None
        self.events = Recorder()
        self._snapshot = Snapshot(node_infos(list(nodes), list(pods)))
        self._stores: dict[Resource, cache.Store] = {}
        for resource, objects in (stores or {}).items():
            self.store(resource).replace(objects)

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    def store(self, resource: Resource) -> cache.Store:
        return self._stores.setdefault(resource, cache.Store())

    def waiting_pod(self, uid: str) -> None:
        return None

    def iterate_waiting_pods(self) -> list[Any]:
        return []

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return []

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Obj, node: NodeInfo) -> Status | None:
        return None

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: Obj, to_add: PodInfo,
                                         node: NodeInfo) -> Status | None:
        return None

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: Obj, to_remove: PodInfo,
                                            node: NodeInfo) -> Status | None:
        return None
