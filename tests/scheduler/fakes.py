"""A `Handle` for plugin tests: a snapshot built from node and pod dicts, stores filled by hand,
and an event recorder that keeps what it is told. No API server, no framework around it.
`FilteringHandle` adds a Filter step that runs real filter functions (`cpu_fit`), nominated pods,
and a client that records writes, for plugins (preemption) that simulate on node copies."""

from __future__ import annotations

from collections.abc import Callable
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

    def filter_runner(self, state: CycleState, pod: Obj, nominated: bool = False) -> Callable[[NodeInfo], Status | None]:
        return lambda node: self.run_filter_plugins_with_nominated_pods(state, pod, node)

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: Obj, to_add: PodInfo,
                                         node: NodeInfo) -> Status | None:
        return None

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: Obj, to_remove: PodInfo,
                                            node: NodeInfo) -> Status | None:
        return None


def cpu_fit(pod: Obj, node: NodeInfo) -> Status | None:
    """A one-resource stand-in for NodeResourcesFit's Filter, with its reason text."""
    if node.requested.milli_cpu + PodInfo.of(pod).requests.milli_cpu > node.allocatable.milli_cpu:
        return Status.unschedulable("Insufficient cpu")
    return None


class FakeClient:
    """Records the writes a plugin sends; names in `missing` answer 404, in `failing` 500."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.missing: set[str] = set()
        self.failing: set[str] = set()

    def _answer(self, name: str) -> None:
        from client.errors import APIError
        if name in self.failing:
            raise APIError(500, "InternalError", f"pods {name!r} could not be written")
        if name in self.missing:
            raise APIError(404, "NotFound", f'pods "{name}" not found')

    async def patch(self, resource: Resource, name: str, patch: Any, namespace: str | None = None, *,
                    patch_type: str = "merge", subresource: str | None = None, **_: Any) -> Obj:
        self.calls.append(("patch", resource.resource, namespace, name, subresource, patch_type, patch))
        self._answer(name)
        return {}

    async def delete(self, resource: Resource, name: str, namespace: str | None = None, **options: Any) -> Obj:
        self.calls.append(("delete", resource.resource, namespace, name, options))
        self._answer(name)
        return {}


class FilteringHandle(FakeHandle):
    """A FakeHandle whose Filter step runs real filter functions (`cpu_fit` by default), with
    nominated pods per node, a recording client, and a record of activated pods."""

    def __init__(self, nodes: list[Obj] = (), pods: list[Obj] = (), *,  # type: ignore[assignment]
                 stores: dict[Resource, list[Obj]] | None = None, filters: list[Any] | None = None,
                 nominated: dict[str, list[Obj]] | None = None, waiting: dict[str, Any] | None = None) -> None:
        super().__init__(nodes, pods, stores=stores)
        self.client = FakeClient()
        self.filters = filters if filters is not None else [cpu_fit]
        self.nominated = {name: [PodInfo.of(p) for p in ps] for name, ps in (nominated or {}).items()}
        self.waiting = waiting or {}
        self.activated: list[Obj] = []
        self.filter_calls = 0

    def waiting_pod(self, uid: str) -> Any:
        return self.waiting.get(uid)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return list(self.nominated.get(node_name, []))

    def activate(self, pods: list[Obj]) -> None:
        self.activated.extend(pods)

    def _run_filters(self, pod: Obj, node: NodeInfo) -> Status | None:
        self.filter_calls += 1
        for check in self.filters:
            status = check(pod, node)
            if status is not None:
                return status
        return None

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Obj, node: NodeInfo) -> Status | None:
        # As upstream: with the nominated pods of equal or higher priority added, then without them.
        mine = (pod.get("metadata") or {}).get("uid")
        prio = int((pod.get("spec") or {}).get("priority") or 0)
        extra = [i for i in self.nominated.get(node.name, []) if i.priority >= prio and i.uid != mine]
        if extra:
            crowded = node.clone()
            for info in extra:
                crowded.add_pod(info)
            status = self._run_filters(pod, crowded)
            if status is not None:
                return status
        return self._run_filters(pod, node)
