"""Strategic merge patch against the 1.36 schemas: the patches `kubectl apply` sends for a
Deployment applied twice, the directives, list order, and upstream's error texts and codes.
`test_against_kubectl.py` checks the same behaviour against kubectl's own library."""

from __future__ import annotations

import copy
from typing import Any, Callable

import pytest

from apiserver import schemas
from apiserver.patching import GENERIC_422_MESSAGE, PatchError, strategic_merge

DEPLOYMENT = schemas.for_kind("apps", "v1", "Deployment")

# A Deployment as the server holds it after a first `kubectl apply`: defaults filled in.
LIVE: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {
        "name": "web", "namespace": "default", "generation": 1, "resourceVersion": "12",
        "labels": {"app": "web", "tier": "frontend"},
        "annotations": {"deployment.kubernetes.io/revision": "1"},
        "finalizers": ["example.com/a", "example.com/b"],
    },
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "containers": [
                    {"name": "web", "image": "nginx:1.25",
                     "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 443, "protocol": "TCP"}],
                     "env": [{"name": "A", "value": "1"}],
                     "resources": {"limits": {"cpu": "1"}}},
                    {"name": "sidecar", "image": "busybox:1.36", "args": ["sleep", "infinity"]},
                ],
                "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
                "volumes": [{"name": "data", "emptyDir": {}}],
            },
        },
    },
    "status": {"replicas": 2},
}


def edited(change: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
    doc = copy.deepcopy(LIVE)
    change(doc)
    return doc


def pod_spec(d: dict[str, Any]) -> dict[str, Any]:
    return d["spec"]["template"]["spec"]


def web(d: dict[str, Any]) -> dict[str, Any]:
    return pod_spec(d)["containers"][0]


ORDER_CONTAINERS = {"$setElementOrder/containers": [{"name": "web"}, {"name": "sidecar"}]}


def in_pod_spec(**fields: Any) -> dict[str, Any]:
    return {"spec": {"template": {"spec": fields}}}


# What `kubectl apply` sends the second time (CreateThreeWayMergePatch), and what must result.
KUBECTL_APPLY = [
    pytest.param(in_pod_spec(**ORDER_CONTAINERS, containers=[{"name": "web", "image": "nginx:1.27"}]),
                 edited(lambda d: web(d).update(image="nginx:1.27")),
                 id="a changed image merges into the container with that name"),
    pytest.param(in_pod_spec(**ORDER_CONTAINERS, containers=[
                     {"name": "web", "$setElementOrder/env": [{"name": "A"}, {"name": "B"}],
                      "env": [{"name": "B", "value": "2"}]}]),
                 edited(lambda d: web(d)["env"].append({"name": "B", "value": "2"})),
                 id="an added env var lands where setElementOrder puts it"),
    pytest.param(in_pod_spec(**ORDER_CONTAINERS, containers=[
                     {"name": "web", "$setElementOrder/ports": [{"containerPort": 80}],
                      "ports": [{"$patch": "delete", "containerPort": 443}]}]),
                 edited(lambda d: web(d)["ports"].pop()),
                 id="a removed container port is deleted by its merge key"),
    pytest.param(in_pod_spec(**{"$setElementOrder/containers": [{"name": "sidecar"}, {"name": "web"}]}),
                 edited(lambda d: pod_spec(d)["containers"].reverse()),
                 id="setElementOrder alone reorders the live containers"),
    pytest.param(in_pod_spec(**{"$setElementOrder/containers": [{"name": "web"}, {"name": "cache"}, {"name": "sidecar"}]},
                             containers=[{"name": "cache", "image": "redis:7"}]),
                 edited(lambda d: pod_spec(d)["containers"].insert(1, {"name": "cache", "image": "redis:7"})),
                 id="a new container goes where setElementOrder says"),
    pytest.param(in_pod_spec(**{"$setElementOrder/containers": [{"name": "web"}]},
                             containers=[{"$patch": "delete", "name": "sidecar"}]),
                 edited(lambda d: pod_spec(d)["containers"].pop()),
                 id="a container removed from the config is deleted"),
    pytest.param({"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": None, "type": "Recreate"}}},
                 edited(lambda d: d["spec"].update(strategy={"type": "Recreate"})),
                 id="switching to Recreate clears rollingUpdate through retainKeys"),
    pytest.param({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}},
                 edited(lambda d: d["spec"].update(strategy={"type": "Recreate"})),
                 id="retainKeys clears server-defaulted fields the config never had"),
    pytest.param({"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/a"],
                               "$setElementOrder/finalizers": ["example.com/b"]}},
                 edited(lambda d: d["metadata"]["finalizers"].remove("example.com/a")),
                 id="a finalizer removed from the config is deleted from the primitive list"),
    pytest.param({"metadata": {"$setElementOrder/finalizers": ["example.com/a", "example.com/c", "example.com/b"],
                               "finalizers": ["example.com/c"]}},
                 edited(lambda d: d["metadata"]["finalizers"].insert(1, "example.com/c")),
                 id="a finalizer added in the middle keeps the config's order"),
    pytest.param({"metadata": {"labels": {"tier": None}}},
                 edited(lambda d: d["metadata"]["labels"].pop("tier")),
                 id="a label set to null is removed"),
    pytest.param(in_pod_spec(tolerations=[{"key": "spot", "operator": "Exists"}]),
                 edited(lambda d: pod_spec(d).update(tolerations=[{"key": "spot", "operator": "Exists"}])),
                 id="tolerations have no merge strategy so the list is replaced"),
    pytest.param(in_pod_spec(**{"$setElementOrder/volumes": [{"name": "data"}]},
                             volumes=[{"$retainKeys": ["configMap", "name"], "configMap": {"name": "cm"}, "name": "data"}]),
                 edited(lambda d: pod_spec(d).update(volumes=[{"name": "data", "configMap": {"name": "cm"}}])),
                 id="a volume switched to another source drops the old one through retainKeys"),
    pytest.param(in_pod_spec(**ORDER_CONTAINERS, containers=[{"name": "web", "resources": {"limits": {"memory": "1Gi"}}}]),
                 edited(lambda d: web(d)["resources"]["limits"].update(memory="1Gi")),
                 id="resource limits merge as a map"),
]

DIRECTIVES = [
    pytest.param(in_pod_spec(containers=[{"name": "cache", "image": "redis:7"}]),
                 edited(lambda d: pod_spec(d)["containers"].insert(0, {"name": "cache", "image": "redis:7"})),
                 id="without setElementOrder a new item goes before the live ones as upstream does"),
    pytest.param(in_pod_spec(containers=[{"name": "sidecar", "image": "busybox:1.37"}, {"name": "cache", "image": "redis:7"}]),
                 edited(lambda d: pod_spec(d)["containers"][1].update(image="busybox:1.37")
                        or pod_spec(d)["containers"].append({"name": "cache", "image": "redis:7"})),
                 id="without setElementOrder the patch's items keep the patch order after earlier live items"),
    pytest.param(in_pod_spec(**{"$setElementOrder/containers": [{"name": "cache"}]},
                             containers=[{"name": "cache", "image": "redis:7"}, {"$patch": "delete", "name": "web"}]),
                 edited(lambda d: pod_spec(d).update(containers=[pod_spec(d)["containers"][1],
                                                                 {"name": "cache", "image": "redis:7"}])),
                 id="an item replaced beside one the config does not list lands in the freed cell as upstream"),
    pytest.param(in_pod_spec(containers=[{"name": "only", "image": "x"}, {"$patch": "replace"}]),
                 edited(lambda d: pod_spec(d).update(containers=[{"name": "only", "image": "x"}])),
                 id="a replace item makes the patch list the whole list"),
    pytest.param({"metadata": {"labels": {"$patch": "replace", "owner": "me"}}},
                 edited(lambda d: d["metadata"].update(labels={"owner": "me"})),
                 id="a replace directive in a map replaces the map"),
    pytest.param({"metadata": {"labels": {"$patch": "delete"}}},
                 edited(lambda d: d["metadata"].update(labels={})),
                 id="a delete directive in a map empties the map"),
    pytest.param({"metadata": {"finalizers": ["example.com/b", "example.com/c"]}},
                 edited(lambda d: d["metadata"].update(finalizers=["example.com/a", "example.com/b", "example.com/c"])),
                 id="a primitive list with merge strategy is a union"),
    pytest.param({"metadata": {"finalizers": ["example.com/c"], "$deleteFromPrimitiveList/finalizers": ["example.com/a"]}},
                 edited(lambda d: d["metadata"].update(finalizers=["example.com/c", "example.com/b"])),
                 id="a primitive list can gain and lose items in one patch"),
    pytest.param({"metadata": {"$deleteFromPrimitiveList/ownerReferences": [{"uid": "1"}]}}, LIVE,
                 id="a deletion list for an absent field changes nothing"),
    pytest.param(in_pod_spec(containers=[{"name": "web", "args": ["-v"]}]),
                 edited(lambda d: web(d).update(args=["-v"])),
                 id="a primitive list without merge strategy is replaced"),
    pytest.param({"spec": {"selector": {"matchLabels": {"app": None, "run": "web"}}}},
                 edited(lambda d: d["spec"]["selector"].update(matchLabels={"run": "web"})),
                 id="nested maps reached through refs merge"),
    pytest.param({"spec": {"paused": True, "minReadySeconds": 5}},
                 edited(lambda d: d["spec"].update(paused=True, minReadySeconds=5)),
                 id="new scalar fields are added"),
    pytest.param({"spec": {"template": {"metadata": {"annotations": {"a": "1", "b": None}}}}},
                 edited(lambda d: d["spec"]["template"]["metadata"].update(annotations={"a": "1"})),
                 id="a new map loses its nulls"),
    pytest.param({"spec": {"newField": {"x": {"$patch": "delete"}, "y": 1, "$retainKeys": ["y"]}}},
                 edited(lambda d: d["spec"].update(newField={"y": 1})),
                 id="directives inside a value taken whole are dropped"),
    pytest.param({"spec": {"unknown": {"b": 2}}},
                 edited(lambda d: d["spec"].update(unknown={"b": 2})),
                 id="a field the schema lacks is added"),
    pytest.param({"$patch": "delete"}, {}, id="a delete directive at the root empties the object"),
]


@pytest.mark.parametrize(("patch", "expected"), KUBECTL_APPLY + DIRECTIVES)
def test_apply(patch: dict[str, Any], expected: dict[str, Any]) -> None:
    before = copy.deepcopy(LIVE), copy.deepcopy(patch)
    assert strategic_merge.apply(LIVE, patch, DEPLOYMENT) == expected
    assert (LIVE, patch) == before  # inputs are never modified


def test_a_field_unknown_to_the_schema_merges_as_json_merge_patch() -> None:
    doc = edited(lambda d: d["spec"].update(extra={"a": 1, "list": [1, 2]}))
    patch = {"spec": {"extra": {"b": 2, "a": None, "list": [3]}}}
    assert strategic_merge.apply(doc, patch, DEPLOYMENT)["spec"]["extra"] == {"b": 2, "list": [3]}


def test_without_a_schema_every_field_merges_as_json_merge_patch() -> None:
    doc = {"spec": {"items": [{"name": "a"}], "m": {"x": 1}}}
    patch = {"spec": {"items": [{"name": "b"}], "m": {"y": 2}}}
    assert strategic_merge.apply(doc, patch, None) == {"spec": {"items": [{"name": "b"}], "m": {"x": 1, "y": 2}}}


POD = schemas.for_kind("", "v1", "Pod")


def test_pod_spec_lists_follow_their_own_merge_keys() -> None:
    pod = {"spec": {"containers": [{"name": "c", "volumeMounts": [{"mountPath": "/a", "name": "v1"}]}],
                    "imagePullSecrets": [{"name": "s1"}]}}
    patch = {"spec": {"containers": [{"name": "c", "volumeMounts": [{"mountPath": "/b", "name": "v2"}]}],
                      "imagePullSecrets": [{"name": "s2"}]}}
    result = strategic_merge.apply(pod, patch, POD)
    assert result["spec"]["containers"][0]["volumeMounts"] == [{"mountPath": "/b", "name": "v2"},
                                                               {"mountPath": "/a", "name": "v1"}]
    assert result["spec"]["imagePullSecrets"] == [{"name": "s2"}, {"name": "s1"}]


# (patch, code, upstream message). 400s come from interpretStrategicMergePatchError; plain Go
# errors become 500 with reason "" through ErrorToAPIStatus, as `kubectl patch` shows them.
FAILURES = [
    pytest.param(in_pod_spec(containers=[{"image": "x"}]), 500,
                 "map: map[image:x] does not contain declared merge key: name",
                 id="a container without its merge key fails"),
    pytest.param({"spec": {"$patch": "merge", "replicas": 3}}, 500,
                 "unknown patch type: merge in map: map[$patch:merge replicas:3]",
                 id="a merge directive in a map is refused as upstream does"),
    pytest.param(in_pod_spec(containers=[{"name": "web", "$patch": "merge"}]), 500,
                 "merging lists cannot yet be specified in the patch", id="a merge directive in a list is refused"),
    pytest.param(in_pod_spec(containers=[{"name": "web", "$patch": "bogus"}]), 500,
                 "unknown patch type: bogus in map: map[$patch:bogus name:web]", id="an unknown list directive is refused"),
    pytest.param({"metadata": {"finalizers": [1]}}, 500,
                 "list element types are not identical: [[example.com/a example.com/b] [1]]",
                 id="mixed element types are refused"),
    pytest.param({"metadata": {"$setElementOrder/foo": ["a"]}}, 500,
                 'unable to find api field in struct ObjectMeta for the json field "foo"',
                 id="a setElementOrder for an unknown field is refused"),
    pytest.param(in_pod_spec(**{"$setElementOrder/containers": [{"name": "web"}]},
                             containers=[{"name": "sidecar", "image": "z"}]), 500,
                 "The order in patch list:\n[map[image:z name:sidecar]]\n doesn't match $setElementOrder list:\n"
                 "[map[name:web]]\n", id="a patch item missing from setElementOrder is refused"),
    pytest.param(in_pod_spec(**{"$setElementOrder/containers": "x"}), 500,
                 "expected a []interface {}, but received a string", id="a setElementOrder that is not a list is refused"),
    pytest.param({"metadata": {"$deleteFromPrimitiveListfinalizers": ["a"]}}, 400,
                 "invalid patch format of primitive list", id="a malformed deletion list key is a bad request"),
    pytest.param({"metadata": {"$setElementOrderfinalizers": ["a"]}}, 400,
                 "invalid patch format of setElementOrder list", id="a malformed order list key is a bad request"),
    pytest.param({"metadata": {"$retainKeys": "name"}}, 400, "invalid patch format of retainKeys",
                 id="retainKeys that is not a list is a bad request"),
    pytest.param({"metadata": {"$retainKeys": ["name"], "labels": {"x": "y"}}}, 400,
                 "invalid patch format of retainKeys", id="a patched key missing from retainKeys is a bad request"),
]


@pytest.mark.parametrize(("patch", "code", "message"), FAILURES)
def test_apply_failure(patch: dict[str, Any], code: int, message: str) -> None:
    with pytest.raises(PatchError) as caught:
        strategic_merge.apply(LIVE, patch, DEPLOYMENT)
    err = caught.value
    assert (err.code, err.message) == (code, message)
    expected_status = {400: ("BadRequest", message), 422: ("Invalid", GENERIC_422_MESSAGE), 500: ("", message)}
    assert (err.reason, err.status_message) == expected_status[code]


def test_a_list_of_lists_is_unprocessable() -> None:
    doc = edited(lambda d: d["metadata"].update(finalizers=[]))
    with pytest.raises(PatchError) as caught:
        strategic_merge.apply(doc, {"metadata": {"finalizers": [["a"]]}}, DEPLOYMENT)
    assert (caught.value.code, caught.value.message) == (422, "lists of lists are not supported")


PARSE_FAILURES = [
    pytest.param(b"[]", "json: cannot unmarshal array into Go value of type map[string]interface {}",
                 id="an array body is rejected"),
    pytest.param(b"42", "json: cannot unmarshal number into Go value of type map[string]interface {}",
                 id="a number body is rejected"),
    pytest.param(b'{"spec":}', "invalid character '}' looking for beginning of value", id="invalid JSON is rejected"),
]


@pytest.mark.parametrize(("body", "message"), PARSE_FAILURES)
def test_parse_failure(body: bytes, message: str) -> None:
    with pytest.raises(PatchError) as caught:
        strategic_merge.parse(body)
    assert (caught.value.code, caught.value.message) == (400, message)


def test_a_null_body_is_an_empty_patch() -> None:
    assert strategic_merge.parse(b"null") == {}
    assert strategic_merge.apply(LIVE, {}, DEPLOYMENT) == LIVE
