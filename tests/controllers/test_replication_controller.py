"""The ReplicationController controller against a real API server in-process: pods made from
the template and owned by the RC, status counted without terminatingReplicas, and the real
`kubectl scale rc` moving the pod count both ways.
"""

from __future__ import annotations

from typing import Any

import pytest

from client.resources import EVENTS, PODS, REPLICATIONCONTROLLERS
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually

CONTROLLERS = ("replicationcontroller",)
NS = "default"


def _rc(name: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": labels,
                     "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def _live_pods(cluster: Cluster, uid: str, n: int) -> Any:
    async def check() -> list[dict[str, Any]] | None:
        items = (await cluster.client.list(PODS, NS))["items"]
        mine = [p for p in items if not p["metadata"].get("deletionTimestamp")
                and any(r["uid"] == uid for r in p["metadata"].get("ownerReferences") or [])]
        return mine if len(mine) == n else None
    return check


@pytest.mark.asyncio(loop_scope="module")
async def test_a_replication_controller_keeps_its_pods_and_scales_with_kubectl(cluster: Cluster) -> None:
    rc = await cluster.client.create(REPLICATIONCONTROLLERS, _rc("legacy", 2), NS)
    uid = rc["metadata"]["uid"]

    pods = await eventually(_live_pods(cluster, uid, 2))
    assert pods[0]["metadata"]["name"].startswith("legacy-")
    assert pods[0]["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "ReplicationController",
                                                       "name": "legacy", "uid": uid, "controller": True,
                                                       "blockOwnerDeletion": True}]

    async def counted() -> dict[str, Any] | None:
        status = (await cluster.client.get(REPLICATIONCONTROLLERS, "legacy", NS)).get("status") or {}
        return status if status.get("replicas") == 2 else None

    status = await eventually(counted)
    assert "terminatingReplicas" not in status and status["observedGeneration"] == 1

    code, out, err = await cluster.kubectl("scale", "rc", "legacy", "--replicas=4")
    assert code == 0, err
    assert out.strip() == "replicationcontroller/legacy scaled"
    await eventually(_live_pods(cluster, uid, 4))

    code, _, err = await cluster.kubectl("scale", "rc", "legacy", "--replicas=1")
    assert code == 0, err
    await eventually(_live_pods(cluster, uid, 1))

    async def both_kinds() -> list[dict[str, Any]] | None:
        events = (await cluster.client.list(EVENTS, NS))["items"]
        mine = [e for e in events if e["involvedObject"].get("uid") == uid]
        return mine if {e["reason"] for e in mine} == {"SuccessfulCreate", "SuccessfulDelete"} else None

    mine = await eventually(both_kinds)
    assert {e["involvedObject"]["kind"] for e in mine} == {"ReplicationController"}
    assert {e["source"]["component"] for e in mine} == {"replication-controller"}
