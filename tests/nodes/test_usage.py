"""nodes/usage.py: usage follows requests under limits, the annotation sets it, counters only grow;
and endpoint/resource_metrics.py renders a sample as the kubelet's /metrics/resource.
"""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.metrics_api import points, scraping
from nodes import usage
from nodes.endpoint import resource_metrics
from tests.nodes.fake_runtime import FakeNode

T = 1_796_126_400.0  # 2026-12-01T12:00:00Z, when the fake containers started


def _pod(resources: dict[str, Any] | None = None, annotations: dict[str, str] | None = None) -> tuple[dict, dict]:
    container = {"name": "c", "resources": resources or {}}
    return {"metadata": {"uid": "u1", "annotations": annotations or {}}, "spec": {"containers": [container]}}, container


@pytest.mark.parametrize("resources, cpu, memory", [
    ({"requests": {"cpu": "500m", "memory": "256Mi"}}, 0.5, 256 * 2**20),
    ({}, usage.IDLE_CPU, usage.IDLE_MEMORY),
    # Requests equal to limits (Guaranteed): the wobble's top touches the limit, never passes it.
    ({"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}, 1 / 1.05, 2**30 / 1.05),
], ids=["requests", "nothing requested idles", "limits bound the wobble"])
def test_a_container_uses_about_what_it_requests(resources: dict, cpu: float, memory: float) -> None:
    pod, container = _pod(resources)
    want = usage.demand(pod, container)

    assert (want.cpu, want.memory, want.exact) == (pytest.approx(cpu), pytest.approx(memory), False)
    samples = [want.cpu_at(T + s) for s in range(0, 120, 7)]
    assert min(samples) >= cpu * 0.95 - 1e-12 and max(samples) <= cpu * 1.05 + 1e-12
    assert max(samples) - min(samples) > cpu * 0.05  # it does move
    limit = (resources.get("limits") or {}).get("cpu")
    assert limit is None or max(samples) <= 1.0 + 1e-12


def test_the_annotation_sets_usage_exactly_and_cpu_stays_under_the_limit() -> None:
    pod, container = _pod({"requests": {"cpu": "100m"}, "limits": {"cpu": "2"}},
                          {"usage.haru.dev/c": "cpu=3,memory=64Mi"})
    want = usage.demand(pod, container)
    assert (want.cpu, want.memory, want.exact) == (2.0, 64 * 2**20, True)  # throttled at the limit
    assert want.cpu_between(1000, 1500) == 1_000_000_000

    pod, container = _pod({"requests": {"cpu": "100m", "memory": "8Mi"}}, {"usage.haru.dev/c": "memory=1Gi"})
    assert (usage.demand(pod, container).cpu, usage.demand(pod, container).memory) == (0.1, 2**30)


@pytest.mark.parametrize("text", ["cpu", "cpu=lots", "gpu=1", "cpu=1,cpu=2", "memory=-1Mi"])
def test_a_malformed_annotation_is_refused_and_ignored(text: str) -> None:
    with pytest.raises(usage.AnnotationError):
        usage.parse_annotation(text)
    pod, container = _pod({"requests": {"cpu": "200m"}}, {"usage.haru.dev/c": text})
    assert usage.demand(pod, container) == usage.demand(*_pod({"requests": {"cpu": "200m"}}))


def test_counters_only_grow_through_annotation_changes_and_pod_deletion() -> None:
    node = FakeNode()
    web = node.add("web", ["a", "b"])
    web.annotations = {"usage.haru.dev/a": "cpu=1,memory=1Gi", "usage.haru.dev/b": "cpu=250m,memory=1Mi"}
    node.add("db", ["pg"]).annotations = {"usage.haru.dev/pg": "cpu=2,memory=1Gi"}
    now = [T + 10]
    meter = usage.Meter(clock=lambda: now[0])

    first = meter.sample(node)
    assert [(c.pod, c.name, c.cpu_total) for c in first.containers] == [
        ("web", "a", 10 * 10**9), ("web", "b", 25 * 10**8), ("db", "pg", 20 * 10**9)]
    assert first.memory == pytest.approx(2**31 + 2**20 + usage.SYSTEM_MEMORY, rel=0.05)
    now[0] += 2
    web.annotations["usage.haru.dev/a"] = "cpu=100m,memory=1Gi"
    second = meter.sample(node)
    assert second.containers[0].cpu_total == 12 * 10**9  # the old rate until this sample
    del node.by_key[("default", "db")]
    now[0] += 2
    third = meter.sample(node)

    assert third.containers[0].cpu_total == 12 * 10**9 + 2 * 10**8  # 100m from the change on
    assert first.cpu_total < second.cpu_total < third.cpu_total  # db's time stays in the node's
    assert third.cpu_total - second.cpu_total == pytest.approx((0.1 + 0.25 + usage.SYSTEM_CPU) * 2e9, rel=0.02)


def test_resource_metrics_round_trip_through_the_api_servers_decoder() -> None:
    node = FakeNode()
    node.add("web", ["app"]).annotations = {"usage.haru.dev/app": "cpu=250m,memory=64Mi"}
    now = [T + 60]
    meter = usage.Meter(clock=lambda: now[0])
    text = resource_metrics.render(meter.sample(node))
    now[0] += 0.5
    later = resource_metrics.render(meter.sample(node))

    lines = text.splitlines()
    assert 'container_cpu_usage_seconds_total{container="app",namespace="default",pod="web"} 15 1796126460000' in lines
    assert 'container_start_time_seconds{container="app",namespace="default",pod="web"} 1.7961264e+09 1796126460000' \
        in lines
    assert 'pod_memory_working_set_bytes{namespace="default",pod="web"} 6.7108864e+07 1796126460000' in lines
    assert ["resource_scrape_error 0", "scrape_error 0"] == [l for l in lines if "scrape_error " in l and not l.startswith("#")]
    names = [l.split()[2] for l in lines if l.startswith("# TYPE")]
    assert names == sorted(names)
    store = points.Points()
    store.store("node-a", scraping.decode(text, T))
    store.store("node-a", scraping.decode(later, T))
    measured = store.pod(("default", "web"))
    assert measured is not None
    assert [(name, u.cpu, u.memory) for name, u in measured[2]] == [("app", 250_000_000, 64 * 2**20)]
    assert store.node_window("node-a") == 0.5
