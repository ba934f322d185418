"""Who does what in an embedded cluster (the `haru_cluster` fixture's): the scheduler binds as
system:kube-scheduler, each kubelet writes its Node, Lease and pod statuses as system:node:<name>,
and neither of them as the admin. The server's authorizer is wrapped to record every decision."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from apiserver.authorization import chain
from cluster.embedded import EmbeddedCluster, Options
from client.resources import PODS

pytestmark = pytest.mark.slow


def _record(cluster: EmbeddedCluster) -> list[tuple[str, str, str, str, str]]:
    """(user, verb, resource, subresource, namespace) of every request the server authorizes from now."""
    running = cluster._parts[0]
    authorizer: chain.Authorizer = running.server.extra[chain.AUTHORIZER]
    seen: list[tuple[str, str, str, str, str]] = []
    original = authorizer.authorize

    def recording(attrs: Any) -> chain.Decision:
        seen.append((attrs.user.name, attrs.verb, attrs.resource, attrs.subresource, attrs.namespace))
        return original(attrs)

    authorizer.authorize = recording  # type: ignore[method-assign]
    return seen


def test_the_scheduler_and_each_kubelet_act_under_their_own_identity(tmp_path: Path) -> None:
    cluster = EmbeddedCluster.start(str(tmp_path / "cluster"), Options(nodes=2, lease_duration=4))
    try:
        seen = _record(cluster)
        pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
        cluster.run(lambda rest: rest.create(PODS, pod, "default"))
        deadline = time.monotonic() + 30
        while True:
            current = cluster.run(lambda rest: rest.get(PODS, "p", "default"))
            if (current.get("status") or {}).get("phase") == "Running":
                break
            assert time.monotonic() < deadline, current
            time.sleep(0.05)
        node = current["spec"]["nodeName"]
        while not any(s[2] == "leases" and s[1] == "update" for s in seen):  # one renewal at least
            assert time.monotonic() < deadline
            time.sleep(0.05)
        who = {(verb, resource, sub): user for user, verb, resource, sub, _ in seen}
        assert who[("create", "pods", "binding")] == "system:kube-scheduler"
        status_writers = {u for u, verb, resource, sub, _ in seen if (resource, sub) == ("pods", "status")}
        assert status_writers == {f"system:node:{node}"}
        lease_writers = {u for u, verb, resource, _, ns in seen if resource == "leases" and ns == "kube-node-lease"}
        assert lease_writers <= {f"system:node:{n}" for n in cluster.node_names} and lease_writers
        assert {u for u, *_rest in seen if u.startswith("system:node:")} <= {
            f"system:node:{n}" for n in cluster.node_names}
    finally:
        cluster.stop()
