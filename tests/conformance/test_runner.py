"""conformance/runner and its reports against an in-process API server, with test-only checks.

The registry's own checks need controllers and nodes (tests/conformance/test_suite_on_haru.py);
here every check is a `registry.Check` built in the test, so each property of the runner is shown
on its own: parallelism and serial checks, gate skips, failures with their exchanges, cleanup on
interrupt, the sweep, and the JUnit / e2e.log / progress renderings.
"""

from __future__ import annotations

import asyncio
import io
import xml.etree.ElementTree as ET

import pytest

from client.kubeconfig import Config
from client.resources import NAMESPACES
from client.rest import RestClient
from conformance import e2e_log, gates, junit, progress, runner, summary
from conformance.context import LABEL, Context
from conformance.registry import CONFORMANCE, FEATURE, Check


def check(name: str, run, *, area: str = "test", kind: str = CONFORMANCE, **extra) -> Check:  # type: ignore[no-untyped-def]
    return Check(name, area, kind, run, module="tests.conformance.test_runner", **extra)


async def _passes(ctx: Context) -> None:
    await ctx.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})


async def _fails(ctx: Context) -> None:
    await ctx.get("v1", "ConfigMap", "missing")


async def _namespaces(config: Config) -> list[dict]:
    async with RestClient(config) as client:
        found = await client.list(NAMESPACES, label_selector=f"{LABEL}=true")
    return [ns for ns in found["items"] if not ns["metadata"].get("deletionTimestamp")]


@pytest.fixture
def config(api) -> Config:  # type: ignore[no-untyped-def]
    return Config.for_url(api.url)


async def test_checks_run_n_at_once_and_serial_ones_alone_afterwards(config: Config) -> None:
    running: set[str] = set()
    seen: list[tuple[str, frozenset[str]]] = []

    def tracked(name: str):  # type: ignore[no-untyped-def]
        async def run(ctx: Context) -> None:
            running.add(name)
            seen.append((name, frozenset(running)))
            await asyncio.sleep(0.05)
            seen.append((name, frozenset(running)))
            running.discard(name)
        return run

    checks = [check(f"p{i}", tracked(f"p{i}")) for i in range(5)] + [check("s", tracked("s"), serial=True)]
    checks.insert(0, checks.pop())  # the serial check first in the list: it still runs last
    results = await runner.run(checks, config, parallel=3, gates=gates.ClusterGates(), account_wait=0)
    assert [r.check.name for r in results] == ["s", "p0", "p1", "p2", "p3", "p4"]
    assert all(r.outcome == runner.PASSED for r in results)
    assert max(len(others) for _, others in seen) == 3
    assert all(others == {"s"} for name, others in seen if name == "s")
    assert not await _namespaces(config)


async def test_a_failure_keeps_the_exchanges_and_the_namespace_is_deleted(config: Config) -> None:
    [failed] = await runner.run([check("f", _fails)], config, gates=gates.ClusterGates(), account_wait=0)
    assert failed.outcome == runner.FAILED
    assert failed.message.startswith("APIError: 404 NotFound")
    assert any("GET /api/v1/namespaces/conformance-test-" in e and "→ 404" in e for e in failed.exchanges)
    assert not await _namespaces(config)


async def test_a_check_past_its_timeout_fails_with_the_timeout_in_the_message(config: Config) -> None:
    async def slow(ctx: Context) -> None:
        await asyncio.sleep(5)

    [result] = await runner.run([check("slow", slow, timeout=0.1)], config, gates=gates.ClusterGates(), account_wait=0)
    assert (result.outcome, result.message) == (runner.FAILED, "the check took longer than 0.1s")


async def test_a_gate_reported_off_skips_its_checks_and_an_unreported_one_is_assumed_on(config: Config) -> None:
    cluster = gates.ClusterGates({"Off": False, "On": True}, "read from /metrics")
    results = await runner.run([check("off", _passes, kind=FEATURE, kep="KEP-1", gates=("On", "Off")),
                                check("unknown", _passes, kind=FEATURE, kep="KEP-1", gates=("Unknown",))],
                               config, gates=cluster, account_wait=0)
    assert [(r.outcome, r.message) for r in results] == [
        (runner.SKIPPED, "feature gate Off is off on this cluster"), (runner.PASSED, "")]


async def test_gates_are_read_from_the_servers_metrics(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from apiserver import runner as apiserver

    running = await apiserver.start(str(tmp_path / "data"), port=0, feature_gates="DRAPrioritizedList=false")
    try:
        cluster = await runner.cluster_gates(Config.for_url(running.url))
    finally:
        await running.stop()
    assert cluster.known and cluster.values["DRAPrioritizedList"] is False and cluster.values["DRAAdminAccess"]
    assert cluster.source.startswith("read from /metrics")


def test_metrics_without_the_gauge_leave_the_gates_unknown() -> None:
    assert gates.parse("# TYPE apiserver_request_total counter\napiserver_request_total{code=\"200\"} 3\n") == {}
    assert gates.parse('kubernetes_feature_enabled{name="A",stage="BETA"} 1\n'
                       'kubernetes_feature_enabled{name="B",stage=""} 0\n') == {"A": True, "B": False}
    assert not gates.ClusterGates().known and "assumed on" in gates.ClusterGates().source


async def test_an_interrupt_cleans_up_the_checks_in_flight(config: Config) -> None:
    started = asyncio.Event()

    async def hangs(ctx: Context) -> None:
        await ctx.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "cluster-scoped-one"}})
        started.set()
        await asyncio.sleep(60)

    task = asyncio.ensure_future(runner.run([check("h", hangs)], config, gates=gates.ClusterGates(), account_wait=0))
    await asyncio.wait_for(started.wait(), 10)
    assert len(await _namespaces(config)) == 2  # its own namespace, and the labelled cluster-scoped object
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not await _namespaces(config)


async def test_a_namespace_without_its_default_account_fails_the_check_before_it_runs(config: Config) -> None:
    ran = []

    async def records(ctx: Context) -> None:
        ran.append(ctx.namespace)

    [result] = await runner.run([check("r", records)], config, gates=gates.ClusterGates(), account_wait=0.2)
    assert result.outcome == runner.FAILED and not ran
    assert "waiting for the namespace's default ServiceAccount" in result.message


async def test_sweep_deletes_what_a_killed_run_left(config: Config) -> None:
    async with RestClient(config) as client:
        await client.create(NAMESPACES, {"metadata": {"name": "conformance-left", "labels": {LABEL: "true"}}})
        await client.create(NAMESPACES, {"metadata": {"name": "not-ours"}})
    assert await runner.sweep(config) == ["namespaces/conformance-left"]
    assert not await _namespaces(config)


def _results() -> list[runner.Result]:
    gated = check("[Feature:X] does x", _passes, area="dra", kind=FEATURE, kep="KEP-9", gates=("X",))
    return [runner.Result(check("ok [Conformance]", _passes, area="apps"), runner.PASSED, 0.5),
            runner.Result(check("bad [Conformance]", _fails, area="apps"), runner.FAILED, 1.25,
                          "AssertionError: want 2, got 1", "Traceback …", ["GET /api/v1/x → 404 (2 ms)"]),
            runner.Result(gated, runner.SKIPPED, 0.0, "feature gate X is off on this cluster")]


def test_junit_holds_a_testcase_per_check_with_failure_and_skip_details() -> None:
    root = ET.fromstring(junit.render(_results(), 1.75))
    suite = root.find("testsuite")
    assert suite is not None and suite.attrib["tests"] == "3" and suite.attrib["failures"] == "1"
    assert suite.attrib["skipped"] == "1"
    cases = suite.findall("testcase")
    assert [(c.attrib["classname"], c.attrib["name"]) for c in cases] == [
        ("apps", "ok [Conformance]"), ("apps", "bad [Conformance]"), ("dra", "[Feature:X] does x [KEP-9] [FeatureGate:X]")]
    failure = cases[1].find("failure")
    assert failure is not None and failure.attrib["message"] == "AssertionError: want 2, got 1"
    assert "GET /api/v1/x → 404" in (failure.text or "")
    skipped = cases[2].find("skipped")
    assert skipped is not None and skipped.attrib["message"] == "feature gate X is off on this cluster"


def test_e2e_log_has_ginkgos_blocks_and_footer() -> None:
    text = e2e_log.render(_results(), registered=10, seconds=1.75)
    assert "Will run 3 of 10 specs" in text
    assert "• [PASSED] [0.500 seconds]\nok [Conformance]" in text
    assert "• [FAILED] [1.250 seconds]\nbad [Conformance]" in text
    assert "  [FAILED] AssertionError: want 2, got 1\n  GET /api/v1/x → 404 (2 ms)" in text
    assert "S [SKIPPED] [0.000 seconds]" in text and "  [SKIPPED] feature gate X is off on this cluster" in text
    assert "Summarizing 1 Failure:\n  [FAIL] bad [Conformance]" in text
    assert text.endswith("Ran 2 of 10 Specs in 1.750 seconds\nFAIL! -- 1 Passed | 1 Failed | 0 Pending | 8 Skipped\nFAIL\n")
    ok = e2e_log.render(_results()[:1], registered=1, seconds=0.5)
    assert ok.endswith("SUCCESS! -- 1 Passed | 0 Failed | 0 Pending | 0 Skipped\nPASS\n")


def test_progress_rewrites_one_line_on_a_tty_and_prints_lines_elsewhere() -> None:
    results = _results()
    tty = io.StringIO()
    live = progress.Progress(3, tty, tty=True)
    live.started(results[0].check)
    live.started(results[1].check)
    live.finished(results[0])
    assert live.line() == "[1/3] passed 1 failed 0 skipped 0 — bad [Conformance]"
    live.finished(results[1])
    assert "FAILED  bad [Conformance]\n        AssertionError: want 2, got 1\n" in tty.getvalue()
    plain = io.StringIO()
    lines = progress.Progress(3, plain, tty=False)
    for result in results:
        lines.started(result.check)
        lines.finished(result)
    assert plain.getvalue().splitlines() == [
        "passed     0.50s  ok [Conformance]",
        "failed     1.25s  bad [Conformance]  (AssertionError: want 2, got 1)",
        "skipped    0.00s  [Feature:X] does x  (feature gate X is off on this cluster)"]


def test_the_summary_counts_by_area_and_kind() -> None:
    table = summary.results_table(_results()).splitlines()
    assert table[0].split() == ["area", "passed", "failed", "skipped"]
    assert table[1].split() == ["apps", "1", "1", "0"] and table[2].split() == ["dra", "0", "0", "1"]
    assert table[-1].split() == ["total", "1", "1", "1"]
    markdown = summary.registry_markdown([r.check for r in _results()])
    assert "| apps | 2 | 0 | 2 |" in markdown and "| dra | 0 | 1 | 1 |" in markdown
    assert markdown.endswith("| **total** | **2** | **1** | **3** |")
