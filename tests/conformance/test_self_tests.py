"""The suite's checks can fail: run against a `haru up` with three behaviours switched off, each
check of that behaviour FAILS (and a gated check skips while the gate reads off).

One cluster carries all three switches: `--feature-gates=DRAPrioritizedList=false` (the check runs
with its gate forced on, so it is not skipped), `--controllers=*,-deployment` (the Deployment
checks), and a `--scheduler-config` with TaintToleration disabled (the taint check). Check timeouts
are shortened: a check that waits for something that never comes fails on its timeout either way.
"""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from client import kubeconfig
from conformance import gates, registry, runner
from tests.conftest import ROOT, Cluster, start_haru, stop_haru
from tests.conformance import self_checks

pytestmark = pytest.mark.slow

SCHEDULER_CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      disabled:
      - name: TaintToleration
"""


@pytest.fixture(scope="module")
def crippled(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    base = tmp_path_factory.mktemp("crippled")
    config = base / "scheduler.yaml"
    config.write_text(SCHEDULER_CONFIG)
    cluster = start_haru(str(base / "haru"), "--feature-gates=DRAPrioritizedList=false", "--controllers=*,-deployment",
                         "--scheduler-config", str(config))
    try:
        yield cluster
    finally:
        stop_haru(cluster)


def _run(cluster: Cluster, checks: list[registry.Check], forced: gates.ClusterGates | None = None) -> list[runner.Result]:
    return asyncio.run(runner.run(checks, kubeconfig.load(cluster.kubeconfig), parallel=4, gates=forced))


def test_a_gate_off_skips_its_checks_with_the_reason(crippled: Cluster, tmp_path: Path) -> None:
    [result] = _run(crippled, [self_checks.PRIORITIZED_LIST])
    assert (result.outcome, result.message) == (runner.SKIPPED, "feature gate DRAPrioritizedList is off on this cluster")
    # The registry's own DRAPrioritizedList checks, through the command and its JUnit report.
    junit = tmp_path / "junit.xml"
    subprocess.run([sys.executable, "-m", "conformance", "--kubeconfig", crippled.kubeconfig, "--focus",
                    r"FeatureGate:DRAPrioritizedList\]", "--junit", str(junit)], cwd=ROOT, capture_output=True,
                   text=True, timeout=300, check=True)
    for case in ET.parse(junit).getroot().iter("testcase"):
        skipped = case.find("skipped")
        assert skipped is not None and "DRAPrioritizedList is off" in skipped.attrib["message"], case.attrib["name"]


def test_a_gate_off_fails_its_check_when_the_gate_is_assumed_on(crippled: Cluster) -> None:
    [result] = _run(crippled, [self_checks.PRIORITIZED_LIST], gates.ClusterGates({"DRAPrioritizedList": True}))
    assert result.outcome == runner.FAILED, result
    assert "allocated from its second subrequest" in result.message


def test_the_deployment_checks_fail_without_the_deployment_controller(crippled: Cluster) -> None:
    sample = [dataclasses.replace(c, timeout=15) for c in registry.all_checks()
              if c.name.startswith("[sig-apps] Deployment ") and "Status endpoints" not in c.name]
    assert len(sample) >= 4
    results = _run(crippled, sample)
    assert [r.check.name for r in results if r.outcome != runner.FAILED] == []


def test_the_taint_check_fails_with_toleration_disabled_in_the_scheduler(crippled: Cluster) -> None:
    [result] = _run(crippled, [self_checks.TAINT])
    assert result.outcome == runner.FAILED and "whose NoSchedule taint it does not tolerate" in result.message, result
