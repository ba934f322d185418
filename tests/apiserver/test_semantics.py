"""API semantics beyond plain CRUD, over raw HTTP: deletion rules, subresources, watch start rules.

Each test names the kube-apiserver behaviour it pins down; all run against the in-process server.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec

from tests.conftest import InProcess

PODS = "/api/v1/namespaces/default/pods"
CMS = "/api/v1/namespaces/default/configmaps"


def _pod(name: str, **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, **meta},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


def _cm(name: str, **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta}}


async def _events(api: InProcess, path: str, count: int) -> list[dict[str, Any]]:
    events = []
    async with api.session.get(api.url + path) as resp:
        assert resp.status == 200
        while len(events) < count:
            line = await asyncio.wait_for(resp.content.readline(), 5)
            if not line:
                break
            events.append(msgspec.json.decode(line))
    return events


async def test_pods_get_their_defaults_and_pending_status(api: InProcess) -> None:
    status, pod, _ = await api.request("POST", PODS, json=_pod("p"))
    assert status == 201
    spec = pod["spec"]
    assert (spec["restartPolicy"], spec["dnsPolicy"], spec["schedulerName"], spec["terminationGracePeriodSeconds"],
            spec["serviceAccountName"], spec["enableServiceLinks"], spec["priority"]) == (
        "Always", "ClusterFirst", "default-scheduler", 30, "default", True, 0)
    container = spec["containers"][0]
    assert (container["imagePullPolicy"], container["terminationMessagePath"],
            container["terminationMessagePolicy"]) == ("Always", "/dev/termination-log", "File")
    assert {t["key"] for t in spec["tolerations"]} == {"node.kubernetes.io/not-ready",
                                                        "node.kubernetes.io/unreachable"}
    assert pod["status"]["phase"] == "Pending" and pod["status"]["qosClass"] == "BestEffort"


async def test_host_users_false_forbids_host_namespaces(api: InProcess) -> None:
    pod = _pod("userns")
    pod["spec"].update(hostUsers=False, hostPID=True)
    status, answer, _ = await api.request("POST", PODS, json=pod)
    assert status == 422 and any(c["field"] == "spec.HostPID" for c in answer["details"]["causes"])
    # UserNamespacesHostNetworkSupport (alpha, on in haru) lets the host network go with a user namespace.
    pod = _pod("userns-net")
    pod["spec"].update(hostUsers=False, hostNetwork=True)
    status, answer, _ = await api.request("POST", PODS, json=pod)
    assert status == 201, answer


async def test_binding_sets_the_node_once_and_eviction_respects_budgets(api: InProcess) -> None:
    await api.request("POST", PODS, json=_pod("b", labels={"app": "guarded"}))
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "b"},
               "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"}}
    status, answer, _ = await api.request("POST", f"{PODS}/b/binding", json=binding)
    assert status == 201 and answer["status"] == "Success"
    status, pod, _ = await api.request("GET", f"{PODS}/b")
    assert pod["spec"]["nodeName"] == "node-1"
    assert {"type": "PodScheduled", "status": "True"}.items() <= pod["status"]["conditions"][-1].items()
    status, answer, _ = await api.request("POST", f"{PODS}/b/binding", json=binding)
    assert status == 409 and answer["reason"] == "Conflict"

    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "guard"},
           "spec": {"selector": {"matchLabels": {"app": "guarded"}}, "minAvailable": 1}}
    assert (await api.request("POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets", json=pdb))[0] == 201
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "b"}}
    # A Pending pod is evicted without asking its budget (upstream's canIgnorePDB); a running one asks.
    assert (await api.request("PATCH", f"{PODS}/b/status", json={"status": {"phase": "Running"}},
                              headers={"Content-Type": "application/merge-patch+json"}))[0] == 200
    status, answer, _ = await api.request("POST", f"{PODS}/b/eviction", json=eviction)
    assert status == 429 and answer["reason"] == "TooManyRequests"
    # No disruption controller has looked at the budget yet.
    assert answer["details"]["causes"] == [{"reason": "DisruptionBudget",
                                            "message": "The disruption budget guard is still being processed by the server."}]
    await api.request("POST", PODS, json=_pod("free"))
    status, answer, _ = await api.request("POST", f"{PODS}/free/eviction",
                                          json={**eviction, "metadata": {"name": "free"}})
    assert status == 201
    assert (await api.request("GET", f"{PODS}/free"))[0] == 404


async def test_binding_clears_the_nominated_node_name(api: InProcess) -> None:
    await api.request("POST", PODS, json=_pod("nominated"))
    patch = {"status": {"nominatedNodeName": "node-2"}}
    status, _, _ = await api.request("PATCH", f"{PODS}/nominated/status", json=patch,
                                     headers={"Content-Type": "application/merge-patch+json"})
    assert status == 200
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "nominated"},
               "target": {"apiVersion": "v1", "kind": "Node", "name": "node-2"}}
    assert (await api.request("POST", f"{PODS}/nominated/binding", json=binding))[0] == 201
    _, pod, _ = await api.request("GET", f"{PODS}/nominated")
    assert pod["spec"]["nodeName"] == "node-2" and "nominatedNodeName" not in pod["status"]


async def test_a_bound_pod_is_deleted_gracefully_and_others_at_once(api: InProcess) -> None:
    await api.request("POST", PODS, json=_pod("g"))
    await api.request("POST", f"{PODS}/g/binding",
                      json={"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "g"},
                            "target": {"kind": "Node", "name": "n"}})
    status, pod, _ = await api.request("DELETE", f"{PODS}/g")
    assert status == 200 and pod["metadata"]["deletionGracePeriodSeconds"] == 30
    status, answer, _ = await api.request("DELETE", f"{PODS}/g", json={"gracePeriodSeconds": 0})
    assert status == 200 and (await api.request("GET", f"{PODS}/g"))[0] == 404


async def test_finalizers_hold_an_object_until_the_last_one_goes(api: InProcess) -> None:
    await api.request("POST", CMS, json=_cm("held", finalizers=["haru.test/a"]))
    status, marked, _ = await api.request("DELETE", f"{CMS}/held", json={"propagationPolicy": "Foreground"})
    assert status == 200 and marked["metadata"]["deletionTimestamp"]
    assert marked["metadata"]["finalizers"] == ["haru.test/a", "foregroundDeletion"]
    status, _, _ = await api.request("PATCH", f"{CMS}/held", json={"metadata": {"finalizers": None}},
                                     headers={"Content-Type": "application/merge-patch+json"})
    assert status == 200
    assert (await api.request("GET", f"{CMS}/held"))[0] == 404


async def test_delete_preconditions_and_dry_run(api: InProcess) -> None:
    _, created, _ = await api.request("POST", CMS, json=_cm("pre"))
    status, answer, _ = await api.request("DELETE", f"{CMS}/pre", json={"preconditions": {"uid": "other"}})
    assert status == 409 and "Precondition failed: UID in precondition: other" in answer["message"]
    before = api.store.revision
    status, answer, _ = await api.request("DELETE", f"{CMS}/pre", json={"dryRun": ["All"]})
    assert status == 200 and api.store.revision == before
    status, answer, _ = await api.request("DELETE", f"{CMS}/pre",
                                          json={"preconditions": {"uid": created["metadata"]["uid"]}})
    assert status == 200 and answer["status"] == "Success" and answer["details"]["name"] == "pre"


async def test_delete_collection_removes_what_the_selector_matches(api: InProcess) -> None:
    for i in range(4):
        await api.request("POST", CMS, json=_cm(f"dc{i}", labels={"batch": "odd" if i % 2 else "even"}))
    status, answer, _ = await api.request("DELETE", f"{CMS}?labelSelector=batch%3Dodd")
    assert status == 200 and [i["metadata"]["name"] for i in answer["items"]] == ["dc1", "dc3"]
    _, listed, _ = await api.request("GET", f"{CMS}?labelSelector=batch")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["dc0", "dc2"]


async def test_creating_in_a_terminating_namespace_is_forbidden(api: InProcess) -> None:
    await api.request("POST", "/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                          "metadata": {"name": "doomed"}})
    status, ns, _ = await api.request("DELETE", "/api/v1/namespaces/doomed")
    assert status == 200 and ns["status"]["phase"] == "Terminating"
    status, answer, _ = await api.request("POST", "/api/v1/namespaces/doomed/configmaps", json=_cm("late"))
    assert status == 403 and answer["reason"] == "Forbidden"
    assert answer["message"] == ('configmaps "late" is forbidden: unable to create new content in namespace doomed '
                                 "because it is being terminated")
    assert answer["details"]["causes"] == [{"reason": "NamespaceTerminating", "field": "metadata.namespace",
                                            "message": "namespace doomed is being terminated"}]


async def test_scale_subresource_speaks_autoscaling_v1(api: InProcess) -> None:
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
              "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                       "template": {"metadata": {"labels": {"app": "web"}},
                                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    path = "/apis/apps/v1/namespaces/default/deployments/web"
    await api.request("POST", "/apis/apps/v1/namespaces/default/deployments", json=deploy)
    status, scale, _ = await api.request("GET", f"{path}/scale")
    assert status == 200 and (scale["kind"], scale["apiVersion"]) == ("Scale", "autoscaling/v1")
    assert scale["spec"]["replicas"] == 2 and scale["status"]["selector"] == "app=web"
    status, scale, _ = await api.request("PATCH", f"{path}/scale", json={"spec": {"replicas": 5}},
                                         headers={"Content-Type": "application/merge-patch+json"})
    assert status == 200 and scale["kind"] == "Scale" and scale["spec"]["replicas"] == 5
    _, stored, _ = await api.request("GET", path)
    assert stored["spec"]["replicas"] == 5 and stored["metadata"]["generation"] == 2


async def test_status_writes_change_only_status_and_spec_writes_ignore_status(api: InProcess) -> None:
    await api.request("POST", PODS, json=_pod("st"))
    status, pod, _ = await api.request("PATCH", f"{PODS}/st/status", json={"status": {"phase": "Running"},
                                                                           "spec": {"priority": 7}},
                                       headers={"Content-Type": "application/merge-patch+json"})
    assert status == 200 and pod["status"]["phase"] == "Running" and pod["spec"]["priority"] == 0
    status, pod, _ = await api.request("PATCH", f"{PODS}/st", json={"status": {"phase": "Failed"}},
                                       headers={"Content-Type": "application/merge-patch+json"})
    assert status == 200 and pod["status"]["phase"] == "Running"


async def test_watch_start_rules_and_the_initial_events_bookmark(api: InProcess) -> None:
    await api.request("POST", CMS, json=_cm("w1"))
    events = await _events(api, f"{CMS}?watch=true&timeoutSeconds=3", 1)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "w1")]
    events = await _events(api, f"{CMS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
                                f"&allowWatchBookmarks=true&timeoutSeconds=3", 2)
    assert events[0]["type"] == "ADDED"
    assert events[1]["type"] == "BOOKMARK"
    assert events[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert events[1]["object"]["metadata"]["resourceVersion"] == str(api.store.revision)


async def test_objects_entering_and_leaving_a_selector_become_added_and_deleted(api: InProcess) -> None:
    _, created, _ = await api.request("POST", CMS, json=_cm("mover", labels={"team": "a"}))
    rv = created["metadata"]["resourceVersion"]
    watcher = asyncio.create_task(_events(api, f"{CMS}?watch=true&resourceVersion={rv}&labelSelector=team%3Db", 2))
    await asyncio.sleep(0.1)
    merge = {"Content-Type": "application/merge-patch+json"}
    await api.request("PATCH", f"{CMS}/mover", json={"metadata": {"labels": {"team": "b"}}}, headers=merge)
    await api.request("PATCH", f"{CMS}/mover", json={"metadata": {"labels": {"team": "c"}}}, headers=merge)
    events = await watcher
    assert [e["type"] for e in events] == ["ADDED", "DELETED"]
    assert events[1]["object"]["metadata"]["labels"] == {"team": "b"}


async def test_tables_for_lists_gets_and_watches(api: InProcess) -> None:
    await api.request("POST", PODS, json=_pod("t1"))
    accept = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}
    status, table, _ = await api.request("GET", PODS, headers=accept)
    assert status == 200 and table["kind"] == "Table"
    assert [c["name"] for c in table["columnDefinitions"]][:5] == ["Name", "Ready", "Status", "Restarts", "Age"]
    assert table["rows"][0]["cells"][:3] == ["t1", "0/1", "Pending"]
    async with api.session.get(f"{api.url}{PODS}?watch=true&timeoutSeconds=2", headers=accept) as resp:
        event = msgspec.json.decode(await resp.content.readline())
    assert event["type"] == "ADDED" and event["object"]["kind"] == "Table"
    assert event["object"]["rows"][0]["cells"][0] == "t1"


async def test_generate_name_and_service_account_tokens(api: InProcess) -> None:
    status, cm, _ = await api.request("POST", CMS, json={"apiVersion": "v1", "kind": "ConfigMap",
                                                         "metadata": {"generateName": "gen-"}})
    assert status == 201 and cm["metadata"]["name"].startswith("gen-") and len(cm["metadata"]["name"]) == 9
    await api.request("POST", "/api/v1/namespaces/default/serviceaccounts",
                      json={"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}})
    status, token, _ = await api.request("POST", "/api/v1/namespaces/default/serviceaccounts/robot/token",
                                         json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                               "spec": {"expirationSeconds": 3600}})
    assert status == 201 and token["status"]["token"].count(".") == 2
    status, review, _ = await api.request("POST", "/apis/authentication.k8s.io/v1/tokenreviews",
                                          json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                                                "spec": {"token": token["status"]["token"]}})
    assert status == 201 and review["status"]["user"]["username"] == "system:serviceaccount:default:robot"


async def test_connect_subresources_of_an_unscheduled_pod(api: InProcess) -> None:
    await api.request("POST", PODS, json=_pod("lonely"))
    status, answer, _ = await api.request("GET", f"{PODS}/lonely/exec?command=true&stdout=true")
    assert status == 400 and answer["message"] == "pod lonely does not have a host assigned"
    # kube's LogLocation has no location for it, and an empty stream is 204 No Content.
    status, answer, _ = await api.request("GET", f"{PODS}/lonely/log")
    assert (status, answer) == (204, "")


async def test_a_large_list_is_streamed_whole_at_one_revision(api: InProcess) -> None:
    for i in range(2100):  # more than two stream pages
        await api.store.create(f"/registry/core/configmaps/default/big{i:05d}", {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"big{i:05d}", "namespace": "default"}})
    status, body, _ = await api.request("GET", CMS)
    assert status == 200 and body["kind"] == "ConfigMapList"
    assert [item["metadata"]["name"] for item in body["items"]] == [f"big{i:05d}" for i in range(2100)]
    assert body["metadata"] == {"resourceVersion": str(api.store.revision)}
