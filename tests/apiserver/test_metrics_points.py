"""apiserver/metrics_api: metrics-server's two-point storage rules and its /metrics/resource decoder."""

from __future__ import annotations

import pytest

from apiserver.metrics_api import points, scraping, serving
from apiserver.metrics_api.points import Batch, Point

S = 1_000_000  # ms: a start well before the scrapes


def _batch(ts: int, node_cpu: int, pods: dict[str, Point] | None = None) -> Batch:
    return Batch(Point(0, ts, node_cpu, 2**30), {("default", name): {"c": p} for name, p in (pods or {}).items()})


def test_a_node_needs_two_points_and_its_rate_is_over_their_window() -> None:
    store = points.Points()
    store.store("n", _batch(S + 10_000, 5 * 10**9))
    assert store.node("n") is None
    store.store("n", _batch(S + 12_000, 6 * 10**9))

    assert store.node("n") == points.Usage((S + 12_000) / 1000, 2.0, 500_000_000, 2**30)
    store.store("n", _batch(S + 12_000, 7 * 10**9))  # not newer: the stored pair stays
    assert store.node("n") is not None and store.node("n").cpu == 1_000_000_000  # type: ignore[union-attr]


def test_a_container_counts_from_its_start_when_it_has_no_earlier_point() -> None:
    store = points.Points()
    store.store("n", _batch(S + 4_000, 1, {"web": Point(S, S + 4_000, 10**9, 2**20)}))

    stamp, window, [(name, measured)] = store.pod(("default", "web"))  # type: ignore[misc]
    assert (stamp, window, name, measured.cpu) == ((S + 4_000) / 1000, 4.0, "c", 250_000_000)


def test_a_restart_or_a_counter_that_went_down_gives_no_rate_from_the_old_run() -> None:
    store = points.Points()
    store.store("n", _batch(S + 4_000, 1, {"web": Point(S, S + 4_000, 4 * 10**9, 1)}))
    # Restarted after the stored point: the new run counts from its own start.
    store.store("n", _batch(S + 8_000, 2, {"web": Point(S + 6_000, S + 8_000, 10**9, 1)}))
    assert store.pod(("default", "web"))[2][0][1].cpu == 500_000_000  # type: ignore[index]
    # Same start, lower counter: metrics-server's "unexpected decrease" skips the container.
    store.store("n", _batch(S + 9_000, 3, {"web": Point(S + 6_000, S + 9_000, 10**8, 1)}))
    assert store.pod(("default", "web")) is None


def test_pods_that_leave_a_node_and_nodes_that_leave_are_forgotten() -> None:
    store = points.Points()
    store.store("n", _batch(S + 1_000, 1, {"web": Point(S, S + 1_000, 1, 1), "db": Point(S, S + 1_000, 1, 1)}))
    store.store("n", _batch(S + 2_000, 2, {"db": Point(S, S + 2_000, 2, 1)}))
    assert store.pod(("default", "web")) is None and store.pod(("default", "db")) is not None
    store.forget("n")
    assert store.pod(("default", "db")) is None and store.node("n") is None and store.nodes() == set()


def test_the_decoder_reads_what_metrics_server_reads_and_drops_incomplete_pods() -> None:
    text = "\n".join([
        "# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds",
        "# TYPE node_cpu_usage_seconds_total counter",
        "node_cpu_usage_seconds_total 357.35491 1633382208454",
        "node_memory_working_set_bytes 1.616171008e+09 1633382208454",
        'container_cpu_usage_seconds_total{container="coredns",namespace="kube-system",pod="dns"} 2.003446 1633382206808',
        'container_memory_working_set_bytes{container="coredns",namespace="kube-system",pod="dns"} 1.4655488e+07 '
        "1633382206808",
        'container_start_time_seconds{container="coredns",namespace="kube-system",pod="dns"} 1.6333822e+09 '
        "1633382200000",
        'container_cpu_usage_seconds_total{container="x",namespace="default",pod="no-memory"} 1 1633382206808',
        "scrape_error 0", ""])

    batch = scraping.decode(text, 0.0)

    assert batch.node == Point(0, 1633382208454, 357_354_910_000, 1_616_171_008)
    assert batch.pods == {("kube-system", "dns"): {"coredns": Point(1633382200000, 1633382206808, 2_003_446_000,
                                                                    14_655_488)}}
    with pytest.raises(scraping.ScrapeError):
        scraping.decode("not a metric line at all {", 0.0)


@pytest.mark.parametrize("seconds, text", [(15.002, "15.002s"), (60.5, "1m0.5s"), (0.5, "500ms"), (2.0, "2s"),
                                           (3600.0, "1h0m0s"), (0.0015, "1.5ms")])
def test_windows_print_as_go_durations(seconds: float, text: str) -> None:
    assert serving.go_duration(seconds) == text


def test_the_metrics_group_comes_after_custom_groups_as_its_apiservice_priority_puts_it() -> None:
    from apiserver import discovery, registry
    from apiserver.metrics_api import resources

    reg = registry.Registry.builtin()
    resources.register(reg)
    reg.add(registry.ResourceInfo(group="zz.example.com", version="v1", resource="widgets", kind="Widget",
                                  singular="widget", namespaced=True, verbs=("get", "list"), builtin=False))

    assert reg.groups()[-2:] == ["zz.example.com", "metrics.k8s.io"]
    assert discovery.api_group(reg, "metrics.k8s.io") == {
        "kind": "APIGroup", "apiVersion": "v1", "name": "metrics.k8s.io",
        "versions": [{"groupVersion": "metrics.k8s.io/v1beta1", "version": "v1beta1"}],
        "preferredVersion": {"groupVersion": "metrics.k8s.io/v1beta1", "version": "v1beta1"}}
