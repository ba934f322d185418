"""ResourceSlice node selection, devices vs sharedCounters and taint timestamps; claim requests that
must be `exactly` or `firstAvailable` (upstream's validateResourceSliceSpec / validateDeviceRequest)."""

from __future__ import annotations

import pytest

from tests.apiserver.kinds.writes import create, created, edited, messages, strategy, update

SELECTION = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"


def slices():
    return strategy("resource.k8s.io", "resourceslices", namespaced=False, has_status=False)


def a_slice(**spec: object) -> dict:
    body = {"driver": "gpu.example.com", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "d"}]}
    body.update(spec)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"}, "spec": body}


def test_a_slice_names_exactly_one_node_selection():
    assert create(slices(), a_slice(nodeName="n1")) == []
    assert messages(create(slices(), a_slice())) == [f"spec: Required value: {SELECTION}"]
    assert messages(create(slices(), a_slice(nodeName="n1", allNodes=True))) == [
        f'spec: Invalid value: "{{`nodeName`, `allNodes`}}": {SELECTION}, but multiple fields are set']


def test_a_false_all_nodes_is_refused_and_counts_as_unset():
    assert messages(create(slices(), a_slice(allNodes=False))) == [
        "spec.allNodes: Invalid value: false: must be either unset or set to true",
        f"spec: Required value: {SELECTION}"]


def test_devices_and_shared_counters_do_not_share_a_slice():
    counters = [{"name": "gpu", "counters": {"memory": {"value": "1Gi"}}}]
    assert messages(create(slices(), a_slice(allNodes=True, sharedCounters=counters))) == [
        'spec: Invalid value: "": only one of `sharedCounters` or `devices` is allowed']


def test_device_taints_get_time_added_and_keep_it_on_update():
    body = a_slice(nodeName="n1", devices=[{"name": "d", "taints": [{"key": "k", "effect": "NoSchedule"}]}])
    old = created(slices(), body)
    stamped = old["spec"]["devices"][0]["taints"][0]["timeAdded"]
    assert stamped.endswith("Z")
    new = edited(old)
    new["spec"]["devices"][0]["taints"][0].pop("timeAdded")
    new["spec"]["devices"][0]["taints"].append({"key": "other", "effect": "NoExecute",
                                                "timeAdded": "2020-01-01T00:00:00Z"})
    assert update(slices(), new, old) == []
    assert [t["timeAdded"] for t in new["spec"]["devices"][0]["taints"]] == [stamped, "2020-01-01T00:00:00Z"]


@pytest.mark.parametrize("resource,path", [("resourceclaims", "spec.devices.requests"),
                                           ("resourceclaimtemplates", "spec.spec.devices.requests")])
def test_a_request_is_exactly_or_first_available(resource, path):
    both = {"name": "gpu", "exactly": {"deviceClassName": "c"},
            "firstAvailable": [{"name": "a", "deviceClassName": "c"}]}
    devices = {"requests": [{"name": "ok", "exactly": {"deviceClassName": "c"}}, both, {"name": "none"}]}
    spec = {"devices": devices} if resource == "resourceclaims" else {"spec": {"devices": devices}}
    kind = "ResourceClaim" if resource == "resourceclaims" else "ResourceClaimTemplate"
    obj = {"apiVersion": "resource.k8s.io/v1", "kind": kind, "metadata": {"name": "c", "namespace": "default"},
           "spec": spec}
    one = "exactly one of `exactly` or `firstAvailable` is required"
    found = [m for m in messages(create(strategy("resource.k8s.io", resource), obj)) if "`exactly`" in m]
    assert found == [f"{path}[1]: Invalid value: null: {one}, but multiple fields are set",
                     f"{path}[2]: Required value: {one}"]
