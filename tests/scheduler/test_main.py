"""`python -m scheduler`: flags refused before it connects, and a clean stop on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from cluster.supervisor import free_port
from scheduler import features

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scheduler", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)


def test_an_unknown_feature_gate_is_refused_with_component_bases_words() -> None:
    result = run("--kubeconfig", "/nonexistent", "--feature-gates", "NoSuchGate=true")
    assert result.returncode == 1
    assert result.stderr.strip() == ('invalid argument "NoSuchGate=true" for "--feature-gates" flag: '
                                     'unrecognized feature gate: NoSuchGate')


def test_a_gate_upstream_locks_is_locked() -> None:
    result = run("--kubeconfig", "/nonexistent", "--feature-gates", "DynamicResourceAllocation=false")
    assert result.returncode == 1
    assert "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true" in result.stderr


def test_a_ga_gate_upstream_has_not_locked_yet_can_be_turned_off() -> None:
    from scheduler import features
    assert features.parse("DRAPrioritizedList=false")["DRAPrioritizedList"] is False


@pytest.mark.parametrize("flag, expected", [
    ("ShardedListAndWatch=false,GangScheduling=false", "GangScheduling=false"),
    ("AllAlpha=false", "AllAlpha=false"),
    ("", ""),
])
def test_haru_ups_gate_flag_keeps_only_the_schedulers_gates(flag: str, expected: str) -> None:
    assert features.select(flag) == expected


def test_alpha_and_beta_gates_are_on_and_can_be_turned_off() -> None:
    gates = features.parse("GangScheduling=false")
    assert gates["GangScheduling"] is False and gates["DRAExtendedResource"] is True
    assert features.defaults()["GenericWorkload"] is True


def test_it_schedules_until_sigterm_and_then_exits_cleanly(haru: Any) -> None:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "scheduler", "--kubeconfig", haru.kubeconfig,
                                "--scheduler-name", "second-scheduler", "--secure-port", str(port)],
                               cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        overrides = {"spec": {"schedulerName": "second-scheduler"}}
        haru.kubectl("run", "second", "--image=nginx", f"--overrides={json.dumps(overrides)}")
        deadline = time.monotonic() + 30
        node = ""
        while not node and time.monotonic() < deadline:
            node = haru.kubectl("get", "pod", "second", "-o", "jsonpath={.spec.nodeName}").stdout
            time.sleep(0.2)
        assert node, "the second scheduler did not bind its pod"
        events = json.loads(haru.kubectl("get", "events.events.k8s.io", "-o", "json").stdout)["items"]
        ours = [e for e in events if e["regarding"]["name"] == "second" and e["reason"] == "Scheduled"]
        assert ours and ours[0]["reportingController"] == "second-scheduler"
        # Its own endpoint (plain HTTP): healthy, and the bound pod counted under its profile.
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as resp:
            assert resp.status == 200 and resp.read() == b"ok"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
            text = resp.read().decode()
        assert 'scheduler_schedule_attempts_total{profile="second-scheduler",result="scheduled"} 1\n' in text
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
    assert process.returncode == 0, err


def test_haru_up_refuses_a_scheduler_config_it_cannot_use_before_it_starts(tmp_path: Path) -> None:
    bad = tmp_path / "scheduler.yaml"
    bad.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles: [\n")
    result = subprocess.run([sys.executable, "-m", "cluster.cli", "up", "--data-dir", str(tmp_path / "data"), "--port",
                             "0", "--scheduler-config", str(bad)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.startswith("haru up: couldn't create scheduler: ")
    assert "haru is serving" not in result.stdout
