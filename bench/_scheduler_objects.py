"""The objects `bench.scheduler` creates: scheduler_perf's templates, as haru's API takes them.

Bodies follow test/integration/scheduler_perf/templates and dra/templates: the default node
(4 CPU, 32Gi, 110 pods, Ready; no kubelet behind it), the default pod (pause, 100m / 500Mi),
the low- and high-priority pods of PreemptionAsync (900m and 3 CPU), the DRA test driver's
ResourceSlice per node, DeviceClass, ResourceClaimTemplate and the pod that uses it.
`create_all` POSTs bodies from several concurrent connections with retries on 429/5xx.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import aiohttp
import msgspec

DRIVER = "test-driver.cdi.k8s.io"
CLASS = "test-class"
TEMPLATE = "test-claim-template"
_JSON = {"Accept": "application/json", "Content-Type": "application/json"}
Obj = dict[str, Any]


def node(name: str) -> Obj:
    capacity = {"pods": "110", "cpu": "4", "memory": "32Gi"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {}, "status": {"capacity": capacity, "allocatable": dict(capacity), "phase": "Running",
                                   "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}


def pod(name: str, namespace: str, *, cpu: str = "100m", priority_class: str = "", priority: int | None = None,
        claim_template: str = "", grace: int | None = None) -> Obj:
    container: Obj = {"name": "pause", "image": "registry.k8s.io/pause:3.10", "ports": [{"containerPort": 80}],
                      "resources": {"requests": {"cpu": cpu, "memory": "500Mi"},
                                    "limits": {"cpu": cpu, "memory": "500Mi"}}}
    spec: Obj = {"containers": [container]}
    if priority_class:
        spec["priorityClassName"] = priority_class
        spec["priority"] = priority
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    if claim_template:
        container["resources"]["claims"] = [{"name": "resource"}]
        spec["resourceClaims"] = [{"name": "resource", "resourceClaimTemplateName": claim_template}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def namespace(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def priority_class(name: str, value: int) -> Obj:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}


def resource_slice(node_name: str, devices: int) -> Obj:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{node_name}-{DRIVER}"},
            "spec": {"driver": DRIVER, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"instance-{i}"} for i in range(devices)]}}


def device_class() -> Obj:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": CLASS},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}


def claim_template(namespace_name: str) -> Obj:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": TEMPLATE, "namespace": namespace_name},
            "spec": {"spec": {"devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": CLASS}}]}}}}


def collection_path(obj: Obj) -> str:
    """Where `obj` is POSTed, from its apiVersion and kind."""
    group_version, kind = obj["apiVersion"], obj["kind"]
    plural = {"Node": "nodes", "Pod": "pods", "Namespace": "namespaces", "PriorityClass": "priorityclasses",
              "ResourceSlice": "resourceslices", "DeviceClass": "deviceclasses",
              "ResourceClaimTemplate": "resourceclaimtemplates", "PodGroup": "podgroups"}[kind]
    prefix = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
    ns = (obj.get("metadata") or {}).get("namespace")
    return f"{prefix}/namespaces/{ns}/{plural}" if ns else f"{prefix}/{plural}"


@dataclass
class Creates:
    count: int = 0
    seconds: float = 0.0
    failed: int = 0
    first_error: str = ""

    def describe(self, what: str) -> str:
        rate = self.count / self.seconds if self.seconds else 0.0
        errors = f"; {self.failed} failed, first: {self.first_error}" if self.failed else ""
        return f"{self.count:,} {what} created in {self.seconds:.1f} s ({rate:,.0f}/s){errors}"


async def create_one(session: aiohttp.ClientSession, url: str, obj: Obj, result: Creates | None = None) -> Obj | None:
    body = msgspec.json.encode(obj)
    for attempt in range(6):
        async with session.post(url + collection_path(obj), data=body, headers=_JSON) as resp:
            if resp.status in (200, 201):
                return msgspec.json.decode(await resp.read())
            text = (await resp.text())[:300]
        if resp.status == 409 and obj["kind"] in ("Namespace", "PriorityClass"):
            return None  # already there from an earlier phase
        if resp.status not in (429, 500, 503) or attempt == 5:
            if result is None:
                raise RuntimeError(f"creating {obj['kind']} {obj['metadata']['name']}: {resp.status} {text}")
            result.failed += 1
            result.first_error = result.first_error or f"{resp.status}: {text}"
            return None
        await asyncio.sleep(0.1 * 2 ** attempt)
    return None


async def create_all(session: aiohttp.ClientSession, url: str, objects: list[Obj], clients: int) -> Creates:
    result = Creates(len(objects))
    pending = iter(objects)

    async def client() -> None:
        for obj in pending:  # a shared iterator: each connection takes the next object
            await create_one(session, url, obj, result)

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    result.seconds = time.perf_counter() - started
    return result


async def ensure_node_status(session: aiohttp.ClientSession, url: str, names: list[str], clients: int) -> int:
    """PATCH nodes/status where the create dropped it (a strategy that clears status on create)."""
    async with session.get(f"{url}/api/v1/nodes/{names[0]}", headers=_JSON) as resp:
        first = msgspec.json.decode(await resp.read())
    if (first.get("status") or {}).get("allocatable"):
        return 0
    status = msgspec.json.encode({"status": node(names[0])["status"]})
    headers = {"Accept": "application/json", "Content-Type": "application/merge-patch+json"}
    pending = iter(names)

    async def client() -> None:
        for name in pending:
            async with session.patch(f"{url}/api/v1/nodes/{name}/status", data=status, headers=headers) as resp:
                if resp.status != 200:
                    raise RuntimeError(f"PATCH nodes/{name}/status: {resp.status} {(await resp.text())[:300]}")

    await asyncio.gather(*(client() for _ in range(clients)))
    return len(names)


async def delete_pod(session: aiohttp.ClientSession, url: str, namespace_name: str, name: str) -> None:
    body = msgspec.json.encode({"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0})
    async with session.delete(f"{url}/api/v1/namespaces/{namespace_name}/pods/{name}", data=body,
                              headers=_JSON) as resp:
        if resp.status not in (200, 202, 404):
            raise RuntimeError(f"deleting pod {namespace_name}/{name}: {resp.status} {(await resp.text())[:300]}")
