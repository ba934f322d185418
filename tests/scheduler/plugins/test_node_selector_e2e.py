"""End to end under `haru up`, with the real kubectl: a pod whose nodeSelector no node matches stays
Pending with upstream's FailedScheduling message, and labelling a node (a Node/UpdateNodeLabel
event NodeAffinity's queueing hint answers Queue for) gets it scheduled and Running."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import Cluster

pytestmark = pytest.mark.slow

POD = """
apiVersion: v1
kind: Pod
metadata:
  name: wants-ssd
spec:
  nodeSelector:
    disktype: ssd
  containers:
  - name: app
    image: busybox
    command: ["sleep", "3600"]
"""


def until(check: Callable[[], Any], bound: float = 60.0) -> Any:
    """Ask `check` again until it answers something truthy or the bound passes; return the last answer."""
    deadline = time.monotonic() + bound
    while True:
        got = check()
        if got or time.monotonic() > deadline:
            return got
        time.sleep(0.25)


def test_unmatched_node_selector_waits_with_the_reason_then_runs_once_a_node_is_labelled(haru: Cluster) -> None:
    nodes = until(lambda: haru.kubectl("get", "nodes", "-o", "name").stdout.split())
    assert nodes, "no node registered"
    haru.kubectl("apply", "-f", "-", input=POD)

    def failed_scheduling() -> str:
        # The scheduler records events.k8s.io/v1 Events, whose text is `note`.
        out = haru.kubectl("get", "events.events.k8s.io", "--field-selector",
                           "reason=FailedScheduling,regarding.name=wants-ssd", "-o", "json").stdout
        return " ".join(e.get("note") or "" for e in json.loads(out)["items"])

    message = until(failed_scheduling)
    # Every node was turned away for this one reason, however many had registered by then.
    assert re.search(r"0/(\d+) nodes are available: \1 node\(s\) didn't match Pod's node affinity/selector\.", message), \
        message
    pod = json.loads(haru.kubectl("get", "pod", "wants-ssd", "-o", "json").stdout)
    assert pod["status"]["phase"] == "Pending" and not pod["spec"].get("nodeName")
    scheduled = [c for c in pod["status"].get("conditions") or [] if c["type"] == "PodScheduled"]
    assert scheduled and scheduled[0]["status"] == "False" and scheduled[0]["reason"] == "Unschedulable"

    target = nodes[-1].removeprefix("node/")
    haru.kubectl("label", "node", target, "disktype=ssd")

    def phase() -> str:
        got = json.loads(haru.kubectl("get", "pod", "wants-ssd", "-o", "json").stdout)
        return got["status"]["phase"] if got["status"].get("phase") == "Running" else ""

    assert until(phase) == "Running"
    placed = json.loads(haru.kubectl("get", "pod", "wants-ssd", "-o", "json").stdout)
    assert placed["spec"]["nodeName"] == target
