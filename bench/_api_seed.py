"""Fill a `haru up` data dir with many objects before the server starts, straight through `Store`.

`bench.apiserver` seeds 100k pods (or 100k configmaps) this way because creating them through the
API would take longer than the benchmark itself. Keys and values are the API server's own: keys
`/registry/core/<resource>/<namespace>/<name>` (cluster-scoped: no namespace), values the object
JSON with uid and creationTimestamp, stamped with resourceVersion by the store. The namespaces are
written too, so the API accepts creates in them. Writes go through group commit, many in flight.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench._pod import pod_object
from storage import Store

_IN_FLIGHT = 2_000
_CREATED = "2026-05-01T10:00:00Z"


@dataclass
class Seeded:
    objects: int
    value_bytes: int  # sum of the stored JSON values, resourceVersion included
    seconds: float

    def describe(self, what: str) -> str:
        return (f"{self.objects:,} {what}, {self.value_bytes / 1e6:,.1f} MB of stored JSON, "
                f"seeded in {self.seconds:.1f} s")


def namespace_object(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": name, "uid": str(uuid.uuid5(uuid.NAMESPACE_DNS, name)), "creationTimestamp": _CREATED,
                     "labels": {"kubernetes.io/metadata.name": name}},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def running_pod(namespace_index: int, index: int) -> dict[str, Any]:
    """bench._pod's running Pod with container images, which the API requires (~2.2 KB).

    Without its ownerReference: no ReplicaSet is stored, and `haru up`'s garbage collector would
    rightly delete every pod whose owner is missing.
    """
    pod = pod_object(namespace_index, index)
    del pod["metadata"]["ownerReferences"]
    web, shipper = pod["spec"]["containers"]
    web["image"] = f"registry.example.com/web/{web['env'][0]['value']}:1.{index % 7}.0"
    shipper["image"] = "registry.example.com/infra/log-shipper:2.4.1"
    return pod


def pod_items(namespaces: int, per_namespace: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """Pods `ns-NN/pod-NNNNNN`, running, as a kubelet reports them."""
    for ns in range(namespaces):
        for i in range(per_namespace):
            pod = running_pod(ns, i)
            yield f"/registry/core/pods/ns-{ns:02d}/{pod['metadata']['name']}", pod


def configmap_object(namespace: str, index: int) -> dict[str, Any]:
    """A configmap of about 600 bytes: an app's settings file and two plain keys."""
    name = f"cm-{index:06d}"
    app = f"web-{index % 50:02d}"
    return {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {
            "name": name, "namespace": namespace,
            "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{namespace}/{name}")),
            "creationTimestamp": _CREATED,
            "labels": {"app": app, "tier": ("frontend", "backend", "cache")[index % 3]},
        },
        "data": {
            "settings.yaml": (f"server:\n  port: 8080\n  name: {app}\nlogging:\n  level: info\n"
                              f"features:\n  cache: true\n  shard: {index % 16}\n"),
            "LOG_LEVEL": "info",
            "UPSTREAM": f"http://{app}.{namespace}.svc.cluster.local:8080",
        },
    }


def configmap_items(namespaces: int, per_namespace: int) -> Iterator[tuple[str, dict[str, Any]]]:
    for ns in range(namespaces):
        namespace = f"cm-{ns:02d}"
        for i in range(per_namespace):
            yield f"/registry/core/configmaps/{namespace}/cm-{i:06d}", configmap_object(namespace, i)


async def seed(data_dir: Path, items: Iterator[tuple[str, dict[str, Any]]], namespaces: list[str],
               progress: Callable[[str], None] | None = None) -> Seeded:
    """Write `namespaces` and `items` into DATA_DIR/store (where `haru up` keeps its store)."""
    started = time.perf_counter()
    store = await Store.open(data_dir / "store")
    total = 0
    count = 0
    try:
        for name in namespaces:
            await store.create(f"/registry/core/namespaces/{name}", namespace_object(name))
        while True:
            chunk = [store.create(key, obj) for key, obj in _take(items, _IN_FLIGHT)]
            if not chunk:
                break
            records = await asyncio.gather(*chunk)
            total += sum(len(r.value) for r in records)
            count += len(records)
            if progress is not None and count % 20_000 == 0:
                progress(f"seeded {count:,} objects")
    finally:
        await store.close()
    return Seeded(count, total, time.perf_counter() - started)


def _take(items: Iterator[tuple[str, dict[str, Any]]], n: int) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for item in items:
        out.append(item)
        if len(out) >= n:
            break
    return out
