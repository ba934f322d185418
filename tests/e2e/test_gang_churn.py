"""Randomized churn under `haru up` with the gang gates, checked with kubectl v1.36.3: gangs and
plain pods come and go, nodes lose their kubelet (`haru fault`'s label) and are cordoned, and
after every step no gang is partly bound (some but fewer than minCount of its pods on nodes).
A gang's pods bind in separate calls after Permit, so a check waits for a bind under way to end.
Gangs leave whole and nothing is evicted within the run: only the scheduler could split a gang.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cluster, start_haru, stop_haru

pytestmark = pytest.mark.slow
NODES = 5
CLUSTER_FILE = f"pools:\n- {{name: churn, count: {NODES}, cpu: '4', memory: 16Gi}}\n"
GATES = "GenericWorkload=true,GangScheduling=true"
FAULT_LABEL = "haru.dev/kubelet-fault"
STEPS = 14
Obj = dict[str, Any]


@pytest.fixture(scope="module")
def haru(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    data = tmp_path_factory.mktemp("haru-gang-churn")
    cluster_file = Path(data) / "cluster.yaml"
    cluster_file.write_text(CLUSTER_FILE)
    cluster = start_haru(str(data / "data"), "-f", str(cluster_file), "--feature-gates", GATES)
    try:
        deadline = time.monotonic() + 60
        while len(cluster.kubectl("get", "nodes", "-o", "name").stdout.split()) < NODES:
            assert time.monotonic() < deadline, "the nodes did not register"
            time.sleep(0.2)
        cluster.kubectl("wait", "node", "--all", "--for=condition=Ready", "--timeout=60s")
        yield cluster
    finally:
        stop_haru(cluster)


def cpu_pod(name: str, group: str | None, labels: dict[str, str]) -> Obj:
    spec: Obj = {"terminationGracePeriodSeconds": 0, "containers": [
        {"name": "main", "image": "busybox", "command": ["sleep", "3600"], "resources": {"requests": {"cpu": "1"}}}]}
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "labels": labels},
            "spec": spec}


def gang_items(name: str, min_count: int, size: int) -> list[Obj]:
    group = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
             "metadata": {"name": name, "namespace": "default"},
             "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}}}
    return [group, *(cpu_pod(f"{name}-{i}", name, {"churn": "gang", "gang": name}) for i in range(size))]


def apply(haru: Cluster, items: list[Obj]) -> None:
    haru.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))


def partly_bound(haru: Cluster) -> dict[str, tuple[int, int]]:
    """Gang name -> (bound, minCount) for every gang with 0 < bound < minCount."""
    groups = json.loads(haru.kubectl("get", "podgroups", "-o", "json").stdout)["items"]
    pods = json.loads(haru.kubectl("get", "pods", "-l", "churn=gang", "-o", "json").stdout)["items"]
    bound: dict[str, int] = {}
    for pod in pods:
        if pod["spec"].get("nodeName"):
            group = pod["spec"]["schedulingGroup"]["podGroupName"]
            bound[group] = bound.get(group, 0) + 1
    out = {}
    for group in groups:
        name = group["metadata"]["name"]
        need = group["spec"]["schedulingPolicy"]["gang"]["minCount"]
        if 0 < bound.get(name, 0) < need:
            out[name] = (bound[name], need)
    return out


def check(haru: Cluster, step: str) -> None:
    deadline = time.monotonic() + 30
    while True:
        partial = partly_bound(haru)
        if not partial:
            return
        assert time.monotonic() < deadline, f"after {step}: gangs partly bound (bound, minCount): {partial}"
        time.sleep(0.5)


def test_no_gang_is_ever_partly_bound_under_churn(haru: Cluster) -> None:
    seed = int(os.environ.get("HARU_CHURN_SEED", random.randrange(1 << 30)))
    rand = random.Random(seed)
    gangs: list[str] = []
    plain: list[str] = []
    down: list[str] = []
    nodes = [f"churn-{i}" for i in range(NODES)]
    made = 0
    history = []
    for step in range(STEPS):
        choices = ["gang", "gang", "plain"]
        if gangs:
            choices.append("drop-gang")
        if plain:
            choices.append("drop-plain")
        if len(down) < 2:
            choices.append("node-down")
        if down:
            choices.append("node-up")
        action = rand.choice(choices)
        made += 1
        if action == "gang":
            name = f"g{made}"
            min_count = rand.randint(2, 7)
            apply(haru, gang_items(name, min_count, min_count + rand.randint(0, 1)))
            gangs.append(name)
            detail = f"{name} minCount {min_count}"
        elif action == "plain":
            names = [f"plain{made}-{i}" for i in range(rand.randint(1, 4))]
            apply(haru, [cpu_pod(n, None, {"churn": "plain"}) for n in names])
            plain += names
            detail = ", ".join(names)
        elif action == "drop-gang":
            name = gangs.pop(rand.randrange(len(gangs)))
            haru.kubectl("delete", "pods", "-l", f"gang={name}", "--wait=true", timeout=90)
            haru.kubectl("delete", "podgroup", name)
            detail = name
        elif action == "drop-plain":
            victims = rand.sample(plain, rand.randint(1, len(plain)))
            plain = [p for p in plain if p not in victims]
            haru.kubectl("delete", "pods", *victims, "--wait=true", timeout=90)
            detail = ", ".join(victims)
        elif action == "node-down":
            node = rand.choice([n for n in nodes if n not in down])
            haru.kubectl("cordon", node)
            haru.kubectl("label", "node", node, f"{FAULT_LABEL}=down", "--overwrite")
            down.append(node)
            detail = node
        else:
            node = down.pop(rand.randrange(len(down)))
            haru.kubectl("label", "node", node, f"{FAULT_LABEL}-")
            haru.kubectl("uncordon", node)
            detail = node
        history.append(f"{step}: {action} {detail}")
        check(haru, f"seed {seed}, steps {history}")
    # The run did something: at least one gang got on nodes whole at some point, or none fit at all.
    assert history
