"""A pod in its grace period, deleted again: only a shorter grace period changes it (rest.BeforeDelete),
and one that finalizers hold keeps the kubelet's 0, so removing the last finalizer deletes it (store.go's
delete-during-update rule). In-process server; `tests/e2e/test_graceful_finalizers_kubectl.py` drives
the same story through kubectl and a hollow kubelet.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from tests.conftest import InProcess

PODS = "/api/v1/namespaces/default/pods"
MERGE = {"Content-Type": "application/merge-patch+json"}


async def _bound_pod(api: InProcess, name: str, *, finalizers: list[str] | None = None, grace: int = 30) -> None:
    meta: dict[str, Any] = {"name": name}
    if finalizers:
        meta["finalizers"] = finalizers
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
           "spec": {"nodeName": "node-1", "terminationGracePeriodSeconds": grace,
                    "containers": [{"name": "c", "image": "busybox"}]}}
    status, body, _ = await api.request("POST", PODS, json=pod)
    assert status == 201, body


async def _delete(api: InProcess, name: str, **options: Any) -> tuple[int, Any]:
    status, body, _ = await api.request("DELETE", f"{PODS}/{name}", json=options or None)
    return status, body


def _seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp).timestamp()


async def test_the_kubelets_final_delete_sets_the_grace_period_to_zero_under_a_finalizer(api: InProcess) -> None:
    await _bound_pod(api, "held", finalizers=["example.com/x"], grace=5)
    _, first = await _delete(api, "held")
    assert first["metadata"]["deletionGracePeriodSeconds"] == 5
    status, final = await _delete(api, "held", gracePeriodSeconds=0, preconditions={"uid": first["metadata"]["uid"]})
    assert status == 200 and final["metadata"]["deletionGracePeriodSeconds"] == 0
    # The deadline moves back by the five seconds given up.
    assert _seconds(final["metadata"]["deletionTimestamp"]) == _seconds(first["metadata"]["deletionTimestamp"]) - 5

    status, patched, _ = await api.request("PATCH", f"{PODS}/held", data=b'{"metadata":{"finalizers":null}}',
                                           headers=MERGE)
    assert status == 200 and patched["metadata"].get("finalizers") is None
    assert (await api.request("GET", f"{PODS}/held"))[0] == 404


async def test_removing_the_finalizer_inside_the_grace_period_leaves_the_pod_to_its_kubelet(api: InProcess) -> None:
    await _bound_pod(api, "early", finalizers=["example.com/x"])
    await _delete(api, "early")
    status, _, _ = await api.request("PATCH", f"{PODS}/early", data=b'{"metadata":{"finalizers":null}}', headers=MERGE)
    assert status == 200
    status, pod, _ = await api.request("GET", f"{PODS}/early")
    assert status == 200 and pod["metadata"]["deletionGracePeriodSeconds"] == 30
    await _delete(api, "early", gracePeriodSeconds=0)
    assert (await api.request("GET", f"{PODS}/early"))[0] == 404


@pytest.mark.parametrize("options", [{}, {"gracePeriodSeconds": 30}, {"gracePeriodSeconds": 45}],
                         ids=["no grace period", "the same grace period", "a longer grace period"])
async def test_a_delete_that_does_not_shorten_the_grace_period_changes_nothing(api: InProcess, options) -> None:
    await _bound_pod(api, "pending", finalizers=["example.com/x"])
    _, first = await _delete(api, "pending")
    before = api.store.revision
    status, again = await _delete(api, "pending", propagationPolicy="Foreground", **options)
    assert status == 200 and api.store.revision == before
    assert again["metadata"]["finalizers"] == ["example.com/x"]  # a pending deletion takes no new finalizers
    assert again["metadata"]["deletionGracePeriodSeconds"] == 30
    assert again["metadata"]["deletionTimestamp"] == first["metadata"]["deletionTimestamp"]


async def test_a_shorter_grace_period_moves_the_deadline(api: InProcess) -> None:
    await _bound_pod(api, "shorter")
    _, first = await _delete(api, "shorter")
    status, second = await _delete(api, "shorter", gracePeriodSeconds=10)
    assert status == 200 and second["metadata"]["deletionGracePeriodSeconds"] == 10
    assert _seconds(second["metadata"]["deletionTimestamp"]) == _seconds(first["metadata"]["deletionTimestamp"]) - 20


async def test_a_dry_run_final_delete_writes_nothing(api: InProcess) -> None:
    await _bound_pod(api, "dry", finalizers=["example.com/x"])
    await _delete(api, "dry")
    before = api.store.revision
    status, answer = await _delete(api, "dry", gracePeriodSeconds=0, dryRun=["All"])
    assert status == 200 and answer["metadata"]["deletionGracePeriodSeconds"] == 0
    assert api.store.revision == before
    _, pod, _ = await api.request("GET", f"{PODS}/dry")
    assert pod["metadata"]["deletionGracePeriodSeconds"] == 30
