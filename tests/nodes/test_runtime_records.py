"""nodes/runtime/records.py names and IDs, and nodes/kubelet/ipam.py addresses."""

from __future__ import annotations

import pytest

from nodes.kubelet import ipam
from nodes.runtime import records


@pytest.mark.parametrize("image, normalized", [
    ("nginx", "docker.io/library/nginx:latest"),
    ("nginx:1.27", "docker.io/library/nginx:1.27"),
    ("bitnami/redis", "docker.io/bitnami/redis:latest"),
    ("registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10"),
    ("localhost:5000/app", "localhost:5000/app:latest"),
    ("busybox@sha256:" + "a" * 64, "docker.io/library/busybox@sha256:" + "a" * 64),
])
def test_images_are_named_as_containerd_reports_them(image: str, normalized: str) -> None:
    assert records.normalize_image(image) == normalized


def test_image_ids_are_digests_of_the_repository() -> None:
    assert records.image_id("nginx").startswith("docker.io/library/nginx@sha256:")
    assert records.image_id("nginx") == records.image_id("docker.io/library/nginx:latest")


def test_container_ids_are_stable_per_attempt() -> None:
    first = records.container_id("uid", "c", 0)
    assert first == records.container_id("uid", "c", 0) != records.container_id("uid", "c", 1)
    assert first.startswith("containerd://") and len(first) == len("containerd://") + 64


def test_pod_ips_skip_the_gateway_are_reused_and_run_out() -> None:
    ips = ipam.PodIPs("10.128.5.0/30")  # hosts .1 (the bridge) and .2
    assert ips.allocate("a") == "10.128.5.2" and ips.allocate("a") == "10.128.5.2"
    with pytest.raises(ipam.Exhausted):
        ips.allocate("b")
    ips.release("a")
    ips.restore("b", "10.128.5.2")
    assert ips.allocate("b") == "10.128.5.2"
