"""Server-side apply's structural merge (before field ownership exists): lists follow their list
type, maps merge, and — the known limit — fields missing from the applied config stay."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apiserver import schemas
from apiserver.patching import apply_merge

DEPLOYMENT = schemas.for_kind("apps", "v1", "Deployment")

LIVE: dict[str, Any] = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "labels": {"app": "web"}, "finalizers": ["example.com/a"]},
    "spec": {
        "replicas": 2,
        "template": {"spec": {
            "nodeSelector": {"disk": "ssd", "zone": "a"},
            "containers": [
                {"name": "web", "image": "nginx:1.25", "args": ["-a"],
                 "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 53, "protocol": "UDP"}]},
                {"name": "sidecar", "image": "busybox"},
            ],
            "tolerations": [{"key": "gpu", "operator": "Exists"}],
        }},
    },
}


def edited(change) -> dict[str, Any]:
    doc = copy.deepcopy(LIVE)
    change(doc)
    return doc


def pod_spec(d: dict[str, Any]) -> dict[str, Any]:
    return d["spec"]["template"]["spec"]


def applied_pod_spec(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"template": {"spec": fields}}}


CASES = [
    pytest.param({"spec": {"replicas": 3}}, edited(lambda d: d["spec"].update(replicas=3)),
                 id="a scalar in the applied config wins"),
    pytest.param({"metadata": {"labels": {"tier": "fe"}}},
                 edited(lambda d: d["metadata"]["labels"].update(tier="fe")),
                 id="maps merge key by key"),
    pytest.param(applied_pod_spec(containers=[{"name": "web", "image": "nginx:1.27"}]),
                 edited(lambda d: pod_spec(d)["containers"][0].update(image="nginx:1.27")),
                 id="a map list merges the item with the same key"),
    pytest.param(applied_pod_spec(containers=[{"name": "cache", "image": "redis"}, {"name": "web", "image": "x"}]),
                 edited(lambda d: pod_spec(d)["containers"][0].update(image="x")
                        or pod_spec(d)["containers"].append({"name": "cache", "image": "redis"})),
                 id="new map list items follow the live ones"),
    pytest.param(applied_pod_spec(containers=[{"name": "web", "ports": [{"containerPort": 80, "name": "http"}]}]),
                 edited(lambda d: pod_spec(d)["containers"][0]["ports"][0].update(name="http")),
                 id="a key field left out matches the one live item with the other keys"),
    pytest.param({"metadata": {"finalizers": ["example.com/b", "example.com/a"]}},
                 edited(lambda d: d["metadata"]["finalizers"].append("example.com/b")),
                 id="a set list is a union in live order"),
    pytest.param(applied_pod_spec(tolerations=[{"key": "spot", "operator": "Exists"}]),
                 edited(lambda d: pod_spec(d).update(tolerations=[{"key": "spot", "operator": "Exists"}])),
                 id="an atomic list is replaced"),
    pytest.param(applied_pod_spec(containers=[{"name": "web", "args": ["-b"]}]),
                 edited(lambda d: pod_spec(d)["containers"][0].update(args=["-b"])),
                 id="an untyped primitive list is replaced"),
    pytest.param(applied_pod_spec(nodeSelector={"zone": "b"}),
                 edited(lambda d: pod_spec(d).update(nodeSelector={"zone": "b"})),
                 id="an atomic map is replaced"),
    pytest.param({"metadata": {"labels": None}}, edited(lambda d: d["metadata"].pop("labels")),
                 id="an explicit null removes the field"),
    pytest.param({"spec": {"template": {"spec": {}}}}, LIVE,
                 id="KNOWN LIMIT fields missing from the applied config stay on the live object"),
]


@pytest.mark.parametrize(("applied", "expected"), CASES)
def test_apply(applied: dict[str, Any], expected: dict[str, Any]) -> None:
    before = copy.deepcopy(LIVE), copy.deepcopy(applied)
    assert apply_merge.apply(LIVE, applied, DEPLOYMENT) == expected
    assert (LIVE, applied) == before


@pytest.mark.parametrize(("applied", "expected"), CASES)
def test_merged_gives_the_same_result_without_copying_and_leaves_both_inputs_alone(
        applied: dict[str, Any], expected: dict[str, Any]) -> None:
    before = copy.deepcopy(LIVE), copy.deepcopy(applied)
    assert apply_merge.merged(LIVE, applied, DEPLOYMENT) == expected
    assert (LIVE, applied) == before


def test_merged_shares_what_the_configuration_leaves_alone() -> None:
    result = apply_merge.merged(LIVE, {"spec": {"replicas": 3}}, DEPLOYMENT)
    assert result["spec"]["replicas"] == 3 and LIVE["spec"]["replicas"] == 2
    assert result is not LIVE and result["spec"] is not LIVE["spec"]
    assert result["metadata"] is LIVE["metadata"]
    assert result["spec"]["template"] is LIVE["spec"]["template"]


def test_without_a_live_object_the_applied_config_is_the_result() -> None:
    applied = {"metadata": {"name": "new"}}
    result = apply_merge.apply(None, applied, DEPLOYMENT)
    assert result == applied and result is not applied


def test_without_a_schema_maps_merge_and_lists_are_replaced() -> None:
    live = {"spec": {"items": [{"name": "a"}], "m": {"x": 1}}}
    applied = {"spec": {"items": [{"name": "b"}], "m": {"y": 2}}}
    assert apply_merge.apply(live, applied, None) == {"spec": {"items": [{"name": "b"}], "m": {"x": 1, "y": 2}}}
