"""Sample objects and keys for the storage tests: small Pod-shaped dicts under /registry/pods/."""

from __future__ import annotations

from typing import Any


def pod(name: str, namespace: str = "ns", **extra: Any) -> dict[str, Any]:
    """A small Pod-shaped object; tests add fields through `extra`."""
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }
    obj.update(extra)
    return obj


def pod_key(name: str, namespace: str = "ns") -> str:
    return f"/registry/pods/{namespace}/{name}"
