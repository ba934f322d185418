"""Issue 14's acceptance point: under a LIST flood from one client, the nodes' leases keep renewing.

An embedded cluster (`haru_cluster`, 3 hollow nodes) with Leases of 2 s (renewed every half
second) and the node lifecycle controller's grace cut to 3 s, so renewals held up for a few
seconds turn a node NotReady. The large collection is 2,500 ConfigMaps of 1 kB. `bench._flood`,
its own process, runs 32 concurrent LISTs of it in a loop for 12 s, all as the ordinary user
`flooder` (view-bound; the admin token with `Impersonate-User`), so APF puts them in
global-default. Through the flood every Node stays Ready, every Lease's renewTime keeps moving,
and pods created meanwhile get bound by the scheduler; the flood itself was served (not just
refused) and every answer carried global-default's PriorityLevel UID. The same scenario with
`priority_and_fairness=False` turns nodes Unknown within the flood (tried by hand; `bench.apf`
measures it). The embedded components still use the admin's credentials, so their requests are
exempt here; with their own identities they land in node-high and workload-high instead.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from kubernetes import client

from client.resources import Resource

ROOT = Path(__file__).resolve().parents[2]
CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap")
OBJECTS, CLIENTS, SECONDS = 2500, 32, 12.0

pytestmark = [pytest.mark.slow, pytest.mark.haru_cluster(
    nodes=3, lease_duration=2, controller_settings={"node-lifecycle": {"grace": 3.0, "monitor_period": 0.2}})]


def _fill(haru_cluster) -> None:
    async def work(rest) -> None:
        payload = "x" * 1000
        names = iter(range(OBJECTS))

        async def writer() -> None:
            for i in names:
                await rest.create(CONFIGMAPS, {"metadata": {"name": f"cm-{i:05d}"}, "data": {"p": payload}}, "flood")
        await asyncio.gather(*(writer() for _ in range(16)))
    haru_cluster.embedded.run(work, timeout=300)


def _renew_times(coordination: client.CoordinationV1Api, nodes: list[str]) -> dict[str, datetime]:
    return {n: coordination.read_namespaced_lease(n, "kube-node-lease").spec.renew_time for n in nodes}


def test_a_list_flood_from_one_user_does_not_starve_lease_renewals_or_binds(haru_cluster):
    api = haru_cluster.api_client
    core, rbac = client.CoreV1Api(api), client.RbacAuthorizationV1Api(api)
    coordination = client.CoordinationV1Api(api)
    nodes = haru_cluster.node_names
    core.create_namespace({"metadata": {"name": "flood"}})
    rbac.create_cluster_role_binding({
        "metadata": {"name": "flooder-view"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "flooder"}]})
    _fill(haru_cluster)
    gd_uid = client.FlowcontrolApiserverV1Api(api).read_priority_level_configuration("global-default").metadata.uid

    flood = subprocess.Popen(
        [sys.executable, "-m", "bench._flood", haru_cluster.endpoint, "/api/v1/namespaces/flood/configmaps",
         # One argv word: a token may start with "-", which argparse would take for an option.
         f"--token={haru_cluster.embedded.token}", "--user", "flooder", "--clients", str(CLIENTS),
         "--seconds", str(SECONDS)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(2.0)  # the flood is at full tilt
        started = datetime.now(timezone.utc)
        before = _renew_times(coordination, nodes)
        for i in range(3):
            core.create_namespaced_pod("default", {"metadata": {"name": f"during-flood-{i}"}, "spec": {
                "containers": [{"name": "c", "image": "busybox"}]}})
        not_ready: list[str] = []
        while flood.poll() is None:
            for node in core.list_node().items:
                ready = next(c for c in node.status.conditions if c.type == "Ready")
                if ready.status != "True":
                    not_ready.append(f"{node.metadata.name}: {ready.status} {ready.reason}")
            time.sleep(0.2)
        after = _renew_times(coordination, nodes)
        out, _ = flood.communicate(timeout=60)
    finally:
        if flood.poll() is None:
            flood.kill()
            flood.communicate()
    result = json.loads(out.strip().splitlines()[-1])

    assert not not_ready, not_ready
    for node in nodes:
        assert after[node] > before[node] and after[node] > started, (node, before[node], after[node])
    for i in range(3):
        pod = core.read_namespaced_pod(f"during-flood-{i}", "default")
        assert pod.spec.node_name in nodes, pod.status
    assert result["codes"].get("200", 0) >= CLIENTS, result  # the flood really ran
    assert set(result["priority_level_uids"]) == {gd_uid}, result
