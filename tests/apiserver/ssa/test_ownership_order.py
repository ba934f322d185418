"""Who owns what a create or an update did not send: upstream's handlers run the field manager
before mutating admission and the strategy, so fields those add belong to nobody.

Over HTTP against an in-process server: a pod created with only containers gets tolerations
(DefaultTolerationSeconds), a service account, a priority and a status from the server, and its
creator owns none of them; defaults applied at decode (dnsPolicy, restartPolicy…) are the creator's.
"""

from __future__ import annotations

from tests.conftest import InProcess

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
       "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def owned_spec(obj: dict, manager: str) -> dict:
    entry = next(e for e in obj["metadata"]["managedFields"] if e["manager"] == manager)
    return entry["fieldsV1"].get("f:spec", {})


async def test_fields_added_by_admission_and_the_strategy_are_nobodys(api: InProcess) -> None:
    status, pod, _ = await api.request("POST", "/api/v1/namespaces/default/pods?fieldManager=creator", json=POD)
    assert status == 201, pod
    assert pod["spec"]["tolerations"] and pod["spec"]["serviceAccountName"] == "default"
    assert pod["spec"]["priority"] == 0
    spec = owned_spec(pod, "creator")
    for added_by_the_server in ("f:tolerations", "f:serviceAccountName", "f:priority", "f:preemptionPolicy"):
        assert added_by_the_server not in spec, added_by_the_server
    for defaulted_at_decode in ("f:containers", "f:dnsPolicy", "f:restartPolicy", "f:schedulerName"):
        assert defaulted_at_decode in spec, defaulted_at_decode


async def test_an_update_owns_only_what_it_changed(api: InProcess) -> None:
    status, pod, _ = await api.request("POST", "/api/v1/namespaces/default/pods?fieldManager=creator", json=POD)
    assert status == 201
    pod["metadata"]["labels"] = {"tier": "web"}
    status, updated, _ = await api.request(
        "PUT", "/api/v1/namespaces/default/pods/p?fieldManager=labeller", json=pod)
    assert status == 200, updated
    labeller = next(e for e in updated["metadata"]["managedFields"] if e["manager"] == "labeller")
    assert labeller["fieldsV1"] == {"f:metadata": {"f:labels": {".": {}, "f:tier": {}}}}
    status, after_status, _ = await api.request(
        "PUT", "/api/v1/namespaces/default/pods/p/status?fieldManager=kubelet",
        json={**updated, "status": {**updated["status"], "phase": "Running"}})
    assert status == 200, after_status
    managers = {(e["manager"], e.get("subresource", "")) for e in after_status["metadata"]["managedFields"]}
    assert managers == {("creator", ""), ("labeller", ""), ("kubelet", "status")}
