"""Pod workers against an in-process API server: the order of transitions, init containers,
sidecars, readiness gates, restart policies, deletion, user-namespace exhaustion, env and logs,
and a kubelet restart that resumes a pod mid-run."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from client.kubeconfig import Config
from client.resources import EVENTS, PODS
from client.rest import RestClient
from nodes import host, pools
from nodes.kubelet.kubelet import NodeSettings
from nodes.kubelet.pod_worker import Settings


@contextlib.asynccontextmanager
async def _nodes(api: Any, tmp_path: Any, *pool_list: pools.Pool) -> AsyncIterator[tuple[RestClient, host.NodesHost]]:
    client = RestClient(Config.for_url(api.url))
    hosted = await host.start(client, pools.expand(list(pool_list) or [pools.Pool("n", 1)]),
                              state_dir=str(tmp_path / "state"),
                              settings=NodeSettings(pods=Settings(grace_scale=0.01, sandbox_retry=0.1)))
    try:
        yield client, hosted
    finally:
        await hosted.stop()
        await client.close()


def _pod(name: str, *containers: dict[str, Any], init: list[dict[str, Any]] | None = None, **spec: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                           "spec": {"nodeName": "n-0", "containers": list(containers), **spec}}
    if init:
        out["spec"]["initContainers"] = init
    return out


def _c(name: str, *command: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "image": "busybox", **({"command": list(command)} if command else {}), **extra}


async def _until(client: RestClient, name: str, check: Any, timeout: float = 20.0) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        pod = await client.get(PODS, name, "default")
        if pod.get("status", {}).get("conditions") and check(pod):
            return pod
        assert loop.time() < deadline, f"pod {name} never got there: {pod.get('status')}"
        await asyncio.sleep(0.05)


def _cond(pod: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(c for c in pod["status"].get("conditions") or [] if c["type"] == kind)


async def test_a_pod_goes_pending_then_running_in_the_kubelets_order(api, tmp_path) -> None:
    async with _nodes(api, tmp_path) as (client, _):
        created = await client.create(PODS, _pod("p", _c("c", "sleep", "3600")))
        seen: list[tuple[str, str, str]] = []
        events = client.watch(PODS, "default", resource_version=created["metadata"]["resourceVersion"],
                              field_selector="metadata.name=p")
        async with contextlib.aclosing(events):
            async for event in events:
                status = event["object"].get("status") or {}
                if not status.get("containerStatuses"):
                    continue
                state = status["containerStatuses"][0]["state"]
                waiting = (state.get("waiting") or {}).get("reason", "")
                seen.append((status["phase"], _cond(event["object"], "PodReadyToStartContainers")["status"],
                             waiting or next(iter(state))))
                if status["phase"] == "Running":
                    break
        assert seen[0] == ("Pending", "False", "ContainerCreating")
        assert seen[-1] == ("Running", "True", "running")


async def test_init_containers_run_in_order_before_the_main_containers(api, tmp_path) -> None:
    async with _nodes(api, tmp_path) as (client, _):
        await client.create(PODS, _pod("p", _c("main", "sleep", "3600"),
                                       init=[_c("first", "sleep", "3"), _c("second", "true")]))
        # 3 s: the poll below must see `first` running, also on a loaded machine.
        pod = await _until(client, "p", lambda p: "running" in (p["status"].get("initContainerStatuses") or [{"state": {}}])[0]["state"])
        assert _cond(pod, "Initialized")["message"] == "containers with incomplete status: [first second]"
        assert pod["status"]["initContainerStatuses"][1]["state"] == {"waiting": {"reason": "PodInitializing"}}
        assert pod["status"]["containerStatuses"][0]["state"] == {"waiting": {"reason": "PodInitializing"}}
        pod = await _until(client, "p", lambda p: p["status"]["phase"] == "Running")
        first, second = pod["status"]["initContainerStatuses"]
        assert first["state"]["terminated"]["reason"] == second["state"]["terminated"]["reason"] == "Completed"
        assert first["state"]["terminated"]["finishedAt"] <= second["state"]["terminated"]["startedAt"]
        assert first["ready"] and not first["started"]
        assert _cond(pod, "Initialized")["status"] == "True"


async def test_a_sidecar_starts_before_the_next_init_container_and_keeps_running(api, tmp_path) -> None:
    async with _nodes(api, tmp_path) as (client, _):
        await client.create(PODS, _pod("p", _c("main", "sleep", "1"), restartPolicy="Never",
                                       init=[_c("proxy", restartPolicy="Always"), _c("setup", "true")]))
        pod = await _until(client, "p", lambda p: _cond(p, "Ready")["status"] == "True")
        proxy, setup = pod["status"]["initContainerStatuses"]
        assert "running" in proxy["state"] and proxy["ready"] and proxy["started"]
        assert setup["state"]["terminated"]["exitCode"] == 0
        assert proxy["state"]["running"]["startedAt"] <= setup["state"]["terminated"]["startedAt"]
        # The main container's end is the pod's end: the sidecar is stopped, and does not count.
        pod = await _until(client, "p", lambda p: p["status"]["phase"] == "Succeeded")
        assert "terminated" in pod["status"]["initContainerStatuses"][0]["state"]


async def test_readiness_gates_hold_ready_until_their_condition_is_true(api, tmp_path) -> None:
    async with _nodes(api, tmp_path) as (client, _):
        await client.create(PODS, _pod("p", _c("c"), readinessGates=[{"conditionType": "example.com/lb"}]))
        pod = await _until(client, "p", lambda p: _cond(p, "ContainersReady")["status"] == "True")
        pod = await _until(client, "p", lambda p: _cond(p, "Ready").get("reason") == "ReadinessGatesNotReady")
        assert _cond(pod, "Ready")["message"] == 'corresponding condition of pod readiness gate "example.com/lb" does not exist.'
        await client.patch(PODS, "p", {"status": {"conditions": [{"type": "example.com/lb", "status": "True"}]}},
                           "default", patch_type="strategic", subresource="status")
        pod = await _until(client, "p", lambda p: _cond(p, "Ready")["status"] == "True")
        assert "message" not in _cond(pod, "Ready") and _cond(pod, "example.com/lb")["status"] == "True"


@pytest.mark.parametrize("policy, command, phase, restarted", [
    ("OnFailure", "exit 0", "Succeeded", False),
    ("Never", "exit 2", "Failed", False),
    ("OnFailure", "exit 2", "Running", True),
])
async def test_restart_policies(api, tmp_path, policy, command, phase, restarted) -> None:
    async with _nodes(api, tmp_path) as (client, _):
        await client.create(PODS, _pod("p", _c("c", "sh", "-c", command), restartPolicy=policy))
        pod = await _until(client, "p", lambda p: p["status"]["phase"] == phase and "running" not in
            p["status"]["containerStatuses"][0]["state"] and (
            not restarted or p["status"]["containerStatuses"][0]["restartCount"] >= 1))
        cs = pod["status"]["containerStatuses"][0]
        assert (cs["restartCount"] >= 1) == restarted


async def test_an_init_container_failing_under_never_fails_the_pod(api, tmp_path) -> None:
    async with _nodes(api, tmp_path) as (client, _):
        await client.create(PODS, _pod("p", _c("main"), init=[_c("setup", "false")], restartPolicy="Never"))
        pod = await _until(client, "p", lambda p: p["status"]["phase"] == "Failed")
        assert pod["status"]["initContainerStatuses"][0]["state"]["terminated"]["exitCode"] == 1
        assert pod["status"]["containerStatuses"][0]["state"] == {"waiting": {"reason": "PodInitializing"}}


async def test_deletion_writes_the_final_status_then_removes_the_pod(api, tmp_path) -> None:
    async with _nodes(api, tmp_path) as (client, hosted):
        await client.create(PODS, _pod("p", _c("c", "sleep", "3600"), terminationGracePeriodSeconds=20))
        await _until(client, "p", lambda p: p["status"]["phase"] == "Running")
        deleted = await client.delete(PODS, "p", "default")
        assert deleted["metadata"]["deletionGracePeriodSeconds"] == 20
        seen = []
        events = client.watch(PODS, "default", resource_version=deleted["metadata"]["resourceVersion"])
        async with contextlib.aclosing(events):
            async for event in events:
                seen.append((event["type"], event["object"]["status"]["phase"]))
                if event["type"] == "DELETED":
                    final = event["object"]
                    break
        assert seen[-1] == ("DELETED", "Failed") and ("MODIFIED", "Failed") in seen
        terminated = final["status"]["containerStatuses"][0]["state"]["terminated"]
        assert (terminated["exitCode"], terminated["reason"]) == (137, "Error")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 20
        while hosted.view.pod("default", "p") is not None:
            assert loop.time() < deadline
            await asyncio.sleep(0.05)


async def test_running_out_of_user_namespace_blocks_keeps_the_pod_pending_with_the_runtimes_error(api, tmp_path) -> None:
    async with _nodes(api, tmp_path, pools.Pool("n", 1, pods=1, userns_blocks=1)) as (client, hosted):
        await client.create(PODS, _pod("a", _c("c", "true"), hostUsers=False, restartPolicy="Never"))
        await _until(client, "a", lambda p: p["status"]["phase"] == "Succeeded")
        await client.create(PODS, _pod("b", _c("c"), hostUsers=False))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 20
        while True:
            listed = await client.list(EVENTS, "default", field_selector="involvedObject.name=b")
            reasons = {(e["reason"], e["message"]) for e in listed["items"]}
            if reasons:
                break
            assert loop.time() < deadline
            await asyncio.sleep(0.05)
        assert reasons == {("FailedCreatePodSandBox", "Failed to create pod sandbox: create user namespace: "
                                                      "could not find an empty slot to allocate a user namespace")}
        pod = await client.get(PODS, "b", "default")
        assert pod["status"]["phase"] == "Pending"
        assert _cond(pod, "PodReadyToStartContainers")["status"] == "False"
        # The finished pod still holds its block until it goes; then b gets it.
        assert hosted.userns_table()["n-0"][0]["hostID"] == 65536
        await client.delete(PODS, "a", "default")
        pod = await _until(client, "b", lambda p: p["status"]["phase"] == "Running")
        assert hosted.view.pod("default", "b").userns["uidMappings"][0] == {"containerId": 0, "hostId": 65536,
                                                                             "length": 65536}


async def test_the_runtime_view_has_env_and_log_lines(api, tmp_path) -> None:
    async with _nodes(api, tmp_path) as (client, hosted):
        env = [{"name": "GREETING", "value": "hi"}, {"name": "ME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
               {"name": "WHERE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
               {"name": "BOTH", "value": "$(GREETING) from $(ME)"}]
        await client.create(PODS, _pod("p", _c("c", "sh", "-c", "echo hello; echo 'two words'; sleep 3600", env=env)))
        await _until(client, "p", lambda p: p["status"]["phase"] == "Running")
        container = hosted.view.pod("default", "p").container("c")
        assert {k: container.env[k] for k in ("GREETING", "ME", "WHERE", "BOTH")} == {
            "GREETING": "hi", "ME": "p", "WHERE": "n-0", "BOTH": "hi from p"}
        assert [(line.stream, line.text) for line in container.logs()] == [("stdout", "hello"), ("stdout", "two words")]
        assert hosted.view.pod("default", "p").userns is None and container.state == "running"


async def test_a_restarted_kubelet_resumes_a_pod_mid_run(api, tmp_path) -> None:
    async with _nodes(api, tmp_path) as (client, _):
        await client.create(PODS, _pod("p", _c("c", "sh", "-c", "echo started; sleep 2"), restartPolicy="Never",
                                       hostUsers=False))
        before = await _until(client, "p", lambda p: p["status"]["phase"] == "Running")
    async with _nodes(api, tmp_path) as (client, hosted):
        record = hosted.view.pod("default", "p")
        assert record is not None and record.userns["uidMappings"][0]["hostId"] == 65536
        assert [line.text for line in record.container("c").logs()] == ["started"]
        after = await _until(client, "p", lambda p: p["status"]["phase"] == "Succeeded")
    cs_before, cs_after = before["status"]["containerStatuses"][0], after["status"]["containerStatuses"][0]
    assert cs_after["containerID"] == cs_before["containerID"] and cs_after["restartCount"] == 0
    assert cs_after["state"]["terminated"]["startedAt"] == cs_before["state"]["running"]["startedAt"]
    assert after["status"]["startTime"] == before["status"]["startTime"]


async def test_a_missing_configmap_holds_the_container_in_create_container_config_error(api, tmp_path) -> None:
    from client.resources import CONFIGMAPS

    async with _nodes(api, tmp_path) as (client, hosted):
        env = [{"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "mode"}}}]
        env_from = [{"secretRef": {"name": "creds", "optional": True}, "prefix": "S_"}]
        await client.create(PODS, _pod("p", _c("c", env=env, envFrom=env_from)))
        pod = await _until(client, "p", lambda p: (p["status"]["containerStatuses"][0]["state"].get("waiting") or {})
                           .get("reason") == "CreateContainerConfigError")
        assert pod["status"]["containerStatuses"][0]["state"]["waiting"]["message"] == 'configmap "settings" not found'
        assert pod["status"]["phase"] == "Pending"
        await client.create(CONFIGMAPS, {"metadata": {"name": "settings"}, "data": {"other": "x"}}, "default")
        pod = await _until(client, "p", lambda p: "couldn't find key" in str(p["status"]["containerStatuses"][0]["state"]))
        assert pod["status"]["containerStatuses"][0]["state"]["waiting"]["message"] == \
            "couldn't find key mode in ConfigMap default/settings"
        await client.patch(CONFIGMAPS, "settings", {"data": {"mode": "fast"}}, "default")
        await _until(client, "p", lambda p: p["status"]["phase"] == "Running")
        assert hosted.view.pod("default", "p").container("c").env["MODE"] == "fast"


async def test_a_claim_not_reserved_for_the_pod_holds_it_in_container_creating(api, tmp_path) -> None:
    from client.resources import RESOURCECLAIMS

    async with _nodes(api, tmp_path) as (client, hosted):
        claim = await client.create(RESOURCECLAIMS, {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "gpu"},
            "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu.example.com"}}]}}},
            "default")
        pod = await client.create(PODS, _pod("p", _c("c", resources={"claims": [{"name": "gpu"}]}),
                                             resourceClaims=[{"name": "gpu", "resourceClaimName": "gpu"}]))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 20
        while True:
            listed = await client.list(EVENTS, "default", field_selector="involvedObject.name=p")
            messages = [e["message"] for e in listed["items"] if e["reason"] == "FailedPrepareDynamicResources"]
            if messages:
                break
            assert loop.time() < deadline
            await asyncio.sleep(0.05)
        assert messages[0] == (f"Failed to prepare dynamic resources: pod p({pod['metadata']['uid']}) is not allowed "
                               f"to use ResourceClaim gpu({claim['metadata']['uid']})")
        current = await client.get(PODS, "p", "default")
        assert current["status"]["containerStatuses"][0]["state"] == {"waiting": {"reason": "ContainerCreating"}}
        claim["status"] = {
            "allocation": {"devices": {"results": [{"request": "g", "driver": "gpu.example.com", "pool": "n-0",
                                                    "device": "gpu-0"}]}},
            "reservedFor": [{"resource": "pods", "name": "p", "uid": pod["metadata"]["uid"]}]}
        await client.update(RESOURCECLAIMS, claim, subresource="status")
        await _until(client, "p", lambda p: p["status"]["phase"] == "Running", timeout=30)


async def test_active_deadline_seconds_fails_the_pod_as_the_kubelet_does(api, tmp_path) -> None:
    async with _nodes(api, tmp_path) as (client, _):
        await client.create(PODS, _pod("p", _c("c", "sleep", "3600"), activeDeadlineSeconds=1))
        pod = await _until(client, "p", lambda p: p["status"]["phase"] == "Failed"
                           and "terminated" in p["status"]["containerStatuses"][0]["state"])
        assert (pod["status"]["reason"], pod["status"]["message"]) == (
            "DeadlineExceeded", "Pod was active on the node longer than the specified deadline")
        assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 137


async def test_a_server_that_handles_sigterm_exits_0_without_waiting_out_the_grace(api, tmp_path) -> None:
    async with _nodes(api, tmp_path) as (client, _):
        await client.create(PODS, _pod("p", _c("web", image="nginx"), terminationGracePeriodSeconds=100_000))
        await _until(client, "p", lambda p: p["status"]["phase"] == "Running")
        deleted = await client.delete(PODS, "p", "default")
        events = client.watch(PODS, "default", resource_version=deleted["metadata"]["resourceVersion"])
        async with contextlib.aclosing(events):
            async for event in events:
                if event["type"] == "DELETED":
                    final = event["object"]
                    break
        terminated = final["status"]["containerStatuses"][0]["state"]["terminated"]
        assert (terminated["exitCode"], terminated["reason"], final["status"]["phase"]) == (0, "Completed", "Succeeded")
