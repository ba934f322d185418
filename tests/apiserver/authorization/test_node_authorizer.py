"""The Node authorizer and NodeRestriction on real requests (`--authorization-mode=Node,RBAC`, the
default): kubelets `system:node:a` and `system:node:b` (static tokens) reach their own Node, Lease,
ResourceSlices and pods, and the secrets and configmaps of pods bound to them, and nothing else,
with upstream's 403 texts; everyone else is judged by RBAC as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any, AsyncIterator

import aiohttp
import msgspec
import pytest_asyncio

from apiserver import runner
from apiserver.authentication import options as authn_options
from apiserver.authorization import chain

ADMIN = "admin-token"
NODE_A, NODE_B, NAMELESS = "token-a", "token-b", "token-nameless"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
SLICES = "/apis/resource.k8s.io/v1/resourceslices"
MERGE = {"Content-Type": "application/merge-patch+json"}


class Server:
    def __init__(self, running: Any, session: aiohttp.ClientSession) -> None:
        self.running = running
        self.session = session

    async def request(self, method: str, path: str, *, token: str = ADMIN, json: Any = None,
                      headers: dict[str, str] | None = None) -> tuple[int, Any]:
        all_headers = {"Authorization": f"Bearer {token}", **(headers or {})}
        body = msgspec.json.encode(json) if json is not None else None
        if body is not None and "Content-Type" not in all_headers:
            all_headers["Content-Type"] = "application/json"
        async with self.session.request(method, self.running.url + path, data=body, headers=all_headers) as resp:
            return resp.status, msgspec.json.decode(await resp.read())


@pytest_asyncio.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(f'{NODE_A},system:node:a,uid-a,"system:nodes"\n{NODE_B},system:node:b,uid-b,"system:nodes"\n'
                      f'{NAMELESS},system:node:,uid-n,"system:nodes"\n')
    data = str(tmp_path / "data")
    running = await runner.start(data, port=0, admin_token=ADMIN, authentication=authn_options.Options(
        admin_token=ADMIN, service_account_key_file=str(tmp_path / "sa.key"), token_auth_file=str(tokens)))
    session = aiohttp.ClientSession()
    try:
        yield Server(running, session)
    finally:
        await session.close()
        await running.stop()


def _node(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}}


def _pod(name: str, node: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x"}],
                                                 **spec}}


async def test_a_node_registers_and_patches_itself_but_not_another_node(server: Server) -> None:
    assert (await server.request("POST", "/api/v1/nodes", json=_node("a"), token=NODE_A))[0] == 201
    assert (await server.request("POST", "/api/v1/nodes", json=_node("b"), token=NODE_B))[0] == 201
    assert (await server.request("GET", "/api/v1/nodes/a", token=NODE_A))[0] == 200
    code, body = await server.request("GET", "/api/v1/nodes/b", token=NODE_A)
    assert code == 403 and body["message"] == ('nodes "b" is forbidden: User "system:node:a" cannot get resource '
                                               '"nodes" in API group "" at the cluster scope: node \'a\' cannot '
                                               "read 'b', only its own Node object")
    code, body = await server.request("GET", "/api/v1/nodes", token=NODE_A)
    assert code == 403 and body["message"].endswith("node 'a' cannot read all nodes, only its own Node object")
    # Its own Node by field selector is its own Node.
    assert (await server.request("GET", "/api/v1/nodes?fieldSelector=metadata.name%3Da", token=NODE_A))[0] == 200
    patch = {"metadata": {"labels": {"x": "y"}}}
    code, body = await server.request("PATCH", "/api/v1/nodes/b", json=patch, token=NODE_A, headers=MERGE)
    assert code == 403 and body["message"] == 'nodes "b" is forbidden: node "a" is not allowed to modify node "b"'
    code, body = await server.request("PATCH", "/api/v1/nodes/b/status", json={"status": {"phase": "x"}},
                                      token=NODE_A, headers=MERGE)
    assert code == 403 and body["message"] == 'nodes "b" is forbidden: node "a" is not allowed to modify node "b"'
    assert (await server.request("PATCH", "/api/v1/nodes/a", json=patch, token=NODE_A, headers=MERGE))[0] == 200
    ready = {"status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}
    assert (await server.request("PATCH", "/api/v1/nodes/a/status", json=ready, token=NODE_A, headers=MERGE))[0] == 200
    code, _ = await server.request("DELETE", "/api/v1/nodes/b", token=NODE_A)
    assert code == 403


async def test_a_node_may_not_set_restricted_labels_or_change_its_taints(server: Server) -> None:
    code, body = await server.request("POST", "/api/v1/nodes", token=NODE_A, json=_node(
        "a", **{"node-restriction.kubernetes.io/pool": "x", "kubernetes.io/hostname": "a"}))
    assert code == 403 and body["message"] == ('nodes "a" is forbidden: node "a" is not allowed to set the '
                                               "following labels: node-restriction.kubernetes.io/pool")
    assert (await server.request("POST", "/api/v1/nodes", token=NODE_A, json=_node(
        "a", **{"kubernetes.io/hostname": "a", "node.kubernetes.io/instance-type": "big", "gpu": "h100"})))[0] == 201
    code, body = await server.request("PATCH", "/api/v1/nodes/a", token=NODE_A, headers=MERGE,
                                      json={"metadata": {"labels": {"node-role.kubernetes.io/control-plane": ""}}})
    assert code == 403 and body["message"] == ('nodes "a" is forbidden: is not allowed to modify labels: '
                                               "node-role.kubernetes.io/control-plane")
    code, body = await server.request("PATCH", "/api/v1/nodes/a", token=NODE_A, headers=MERGE, json={
        "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}})
    assert code == 403 and body["message"] == 'nodes "a" is forbidden: node "a" is not allowed to modify taints'
    # The admin is not a node: the same label is the admin's to set.
    assert (await server.request("PATCH", "/api/v1/nodes/a", headers=MERGE,
                                 json={"metadata": {"labels": {"node-restriction.kubernetes.io/pool": "x"}}}))[0] == 200


async def test_a_node_renews_only_its_own_lease_in_kube_node_lease(server: Server) -> None:
    lease = {"metadata": {"name": "a"}, "spec": {"holderIdentity": "a", "leaseDurationSeconds": 40}}
    assert (await server.request("POST", LEASES, json=lease, token=NODE_A))[0] == 201
    renew = {"spec": {"renewTime": "2026-01-01T00:00:00.000000Z"}}
    assert (await server.request("PATCH", f"{LEASES}/a", json=renew, token=NODE_A, headers=MERGE))[0] == 200
    code, body = await server.request("PATCH", f"{LEASES}/a", json=renew, token=NODE_B, headers=MERGE)
    assert code == 403 and body["message"].endswith(
        "can only access node lease with the same name as the requesting node")
    code, body = await server.request("POST", LEASES, json={"metadata": {"name": "a2"}, "spec": {}}, token=NODE_A)
    assert code == 403 and body["message"] == ('leases.coordination.k8s.io "a2" is forbidden: can only access node '
                                               "lease with the same name as the requesting node")
    code, body = await server.request("GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/a", token=NODE_A)
    assert code == 403 and body["message"].endswith(
        'can only access leases in the "kube-node-lease" system namespace')


async def test_a_node_reads_the_secrets_and_configmaps_of_its_own_pods_only(server: Server) -> None:
    for kind, name in (("secrets", "s-a"), ("secrets", "s-b"), ("configmaps", "c-a")):
        assert (await server.request("POST", f"/api/v1/namespaces/default/{kind}",
                                     json={"metadata": {"name": name}}))[0] == 201
    volumes = [{"name": "v", "secret": {"secretName": "s-a"}}, {"name": "w", "configMap": {"name": "c-a"}}]
    assert (await server.request("POST", "/api/v1/namespaces/default/pods",
                                 json=_pod("p-a", "a", volumes=volumes)))[0] == 201
    assert (await server.request("POST", "/api/v1/namespaces/default/pods", json=_pod(
        "p-b", "b", imagePullSecrets=[{"name": "s-b"}])))[0] == 201
    assert (await server.request("GET", "/api/v1/namespaces/default/secrets/s-a", token=NODE_A))[0] == 200
    assert (await server.request("GET", "/api/v1/namespaces/default/configmaps/c-a", token=NODE_A))[0] == 200
    code, body = await server.request("GET", "/api/v1/namespaces/default/secrets/s-b", token=NODE_A)
    assert code == 403 and body["message"] == (
        'secrets "s-b" is forbidden: User "system:node:a" cannot get resource "secrets" in API group "" in the '
        "namespace \"default\": no relationship found between node 'a' and this object")
    code, body = await server.request("GET", "/api/v1/namespaces/default/secrets", token=NODE_A)
    assert code == 403 and body["message"].endswith(": No Object name found")
    assert (await server.request("GET", "/api/v1/namespaces/default/secrets/s-b", token=NODE_B))[0] == 200
    # Pods: its own by name and by the spec.nodeName selector.
    assert (await server.request("GET", "/api/v1/namespaces/default/pods/p-a", token=NODE_A))[0] == 200
    assert (await server.request("GET", "/api/v1/namespaces/default/pods/p-b", token=NODE_A))[0] == 403
    assert (await server.request("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Da", token=NODE_A))[0] == 200
    code, body = await server.request("GET", "/api/v1/pods", token=NODE_A)
    assert code == 403 and body["message"].endswith("can only list/watch pods with spec.nodeName field selector")


async def test_a_node_writes_status_only_for_pods_bound_to_it(server: Server) -> None:
    for name, node in (("p-a", "a"), ("p-b", "b")):
        assert (await server.request("POST", "/api/v1/namespaces/default/pods", json=_pod(name, node)))[0] == 201
    running = {"status": {"phase": "Running"}}
    assert (await server.request("PATCH", "/api/v1/namespaces/default/pods/p-a/status", json=running, token=NODE_A,
                                 headers=MERGE))[0] == 200
    code, body = await server.request("PATCH", "/api/v1/namespaces/default/pods/p-b/status", json=running,
                                      token=NODE_A, headers=MERGE)
    assert code == 403 and body["message"] == ('pods "p-b" is forbidden: node "a" can only update pod status for '
                                               "pods with spec.nodeName set to itself")
    code, body = await server.request("PATCH", "/api/v1/namespaces/default/pods/p-a/status", token=NODE_A,
                                      headers=MERGE, json={"metadata": {"labels": {"x": "y"}}})
    assert code == 403 and body["message"].endswith('node "a" cannot update labels through pod status')
    code, body = await server.request("DELETE", "/api/v1/namespaces/default/pods/p-b", token=NODE_A)
    assert code == 403 and body["message"].endswith('node "a" can only delete pods with spec.nodeName set to itself')
    code, body = await server.request("POST", "/api/v1/namespaces/default/pods", json=_pod("m", "a"), token=NODE_A)
    assert code == 403 and body["message"] == ('pods "m" is forbidden: pod does not have "kubernetes.io/config.mirror" '
                                               'annotation, node "a" can only create mirror pods')
    assert (await server.request("DELETE", "/api/v1/namespaces/default/pods/p-a", token=NODE_A))[0] == 200


async def test_a_node_publishes_and_lists_only_its_own_resource_slices(server: Server) -> None:
    def slice_for(name: str, node: str) -> dict[str, Any]:
        return {"metadata": {"name": name}, "spec": {"driver": "gpu.haru.dev", "nodeName": node,
                                                     "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}}}
    assert (await server.request("POST", SLICES, json=slice_for("a-gpu", "a"), token=NODE_A))[0] == 201
    code, body = await server.request("POST", SLICES, json=slice_for("b-gpu", "b"), token=NODE_A)
    assert code == 403 and body["message"] == ('resourceslices.resource.k8s.io "b-gpu" is forbidden: can only create '
                                               "ResourceSlice with the same NodeName as the requesting node")
    assert (await server.request("POST", SLICES, json=slice_for("b-gpu", "b"), token=NODE_B))[0] == 201
    assert (await server.request("GET", f"{SLICES}?fieldSelector=spec.nodeName%3Da", token=NODE_A))[0] == 200
    code, body = await server.request("GET", SLICES, token=NODE_A)
    assert code == 403 and body["message"].endswith("can only list/watch/deletecollection resourceslices with nodeName field selector")
    assert (await server.request("GET", f"{SLICES}/b-gpu", token=NODE_A))[0] == 403
    code, body = await server.request("DELETE", f"{SLICES}/b-gpu", token=NODE_A)
    assert code == 403 and body["message"].endswith("no relationship found between node 'a' and this object")
    assert (await server.request("DELETE", f"{SLICES}/a-gpu", token=NODE_A))[0] == 200


async def test_static_node_rules_cover_the_rest_and_nameless_nodes_are_refused(server: Server) -> None:
    assert (await server.request("GET", "/api/v1/services", token=NODE_A))[0] == 200
    code, body = await server.request("GET", "/api/v1/namespaces", token=NODE_A)
    assert code == 403 and body["message"] == ('namespaces is forbidden: User "system:node:a" cannot list resource '
                                               '"namespaces" in API group "" at the cluster scope')
    code, body = await server.request("GET", "/api/v1/services", token=NAMELESS)
    assert code == 403 and body["message"].endswith(': unknown node for user "system:node:"')
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": {"namespace": "x"}}
    code, body = await server.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", json=review,
                                      token=NODE_A)
    assert code == 201 and body["status"]["incomplete"] is True
    assert "node authorizer does not support user rule resolution" in body["status"]["evaluationError"]


async def test_a_node_gets_tokens_only_for_accounts_of_its_pods_bound_to_them(server: Server) -> None:
    for name in ("robot", "other"):
        assert (await server.request("POST", "/api/v1/namespaces/default/serviceaccounts",
                                     json={"metadata": {"name": name}}))[0] == 201
    uids = {}
    for name, node in (("p-a", "a"), ("p-b", "b")):
        code, pod = await server.request("POST", "/api/v1/namespaces/default/pods",
                                         json=_pod(name, node, serviceAccountName="robot"))
        assert code == 201
        uids[name] = pod["metadata"]["uid"]
    tokens = "/api/v1/namespaces/default/serviceaccounts/robot/token"

    def request(pod: str | None, uid: str | None = None) -> dict[str, Any]:
        spec: dict[str, Any] = {"audiences": ["https://kubernetes.default.svc.cluster.local"]}
        if pod:
            spec["boundObjectRef"] = {"apiVersion": "v1", "kind": "Pod", "name": pod, "uid": uid or uids[pod]}
        return {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec}

    code, body = await server.request("POST", tokens, json=request("p-a"), token=NODE_A)
    assert code == 201 and body["status"]["token"]
    code, body = await server.request("POST", tokens, json=request("p-b"), token=NODE_A)
    assert code == 403 and body["message"] == ('serviceaccounts "robot" is forbidden: node requested token bound to '
                                               "a pod scheduled on a different node")
    code, body = await server.request("POST", tokens, json=request(None), token=NODE_A)
    assert code == 403 and body["message"].endswith("node requested token not bound to a pod")
    code, body = await server.request("POST", tokens, json=request("p-a", "not-the-uid"), token=NODE_A)
    assert code == 403 and "does not match the UID in record" in body["message"]
    code, body = await server.request("POST", "/api/v1/namespaces/default/serviceaccounts/other/token",
                                      json=request("p-a"), token=NODE_A)
    assert code == 403 and body["message"].endswith("no relationship found between node 'a' and this object")
    # Anyone else is not NodeRestriction's: the admin's unbound token is issued as before.
    assert (await server.request("POST", tokens, json=request(None)))[0] == 201


def test_node_rbac_is_the_default_mode_of_an_authenticating_server() -> None:
    assert chain.default_mode(authenticated=True) == "Node,RBAC"
    assert chain.parse_modes("Node,RBAC") == ("Node", "RBAC")
    assert chain.default_mode(authenticated=False) == "AlwaysAllow"


async def test_a_node_evicts_only_pods_bound_to_it(server: Server) -> None:
    for name, node in (("p-a", "a"), ("p-b", "b")):
        assert (await server.request("POST", "/api/v1/namespaces/default/pods", json=_pod(name, node)))[0] == 201

    def eviction(name: str) -> dict[str, Any]:
        return {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": "default"}}

    code, body = await server.request("POST", "/api/v1/namespaces/default/pods/p-b/eviction", json=eviction("p-b"),
                                      token=NODE_A)
    assert code == 403 and body["message"] == ('pods "p-b" is forbidden: node "a" can only evict pods with '
                                               "spec.nodeName set to itself")
    code, body = await server.request("POST", "/api/v1/namespaces/default/pods/p-a/eviction", json=eviction("p-a"),
                                      token=NODE_A)
    assert code == 201, body
