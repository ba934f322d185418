"""RBAC on real requests to an in-process server with a bearer-token admin: service-account tokens get
exactly their bindings, the 403 is kube's text, impersonation needs `impersonate`, the reviews answer
from the same chain, and writes to roles and bindings cannot escalate."""

from __future__ import annotations

from pathlib import Path
from typing import Any, AsyncIterator

import aiohttp
import msgspec
import pytest
import pytest_asyncio

from apiserver import runner
from apiserver.authorization import bootstrap_policy, chain

ADMIN = "admin-token"
RBAC = "/apis/rbac.authorization.k8s.io/v1"


class Server:
    def __init__(self, running: Any, session: aiohttp.ClientSession) -> None:
        self.running = running
        self.session = session

    async def token(self, namespace: str, name: str) -> str:
        """A service-account token for namespace/name; the account (and namespace) made if missing,
        since a token authenticates only while its account exists."""
        await self.request("POST", "/api/v1/namespaces", json={"metadata": {"name": namespace}})
        await self.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts", json={"metadata": {"name": name}})
        _, account = await self.request("GET", f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}")
        tokens = self.running.server.extra["authenticator"].tokens
        return tokens.issue(namespace, name, account["metadata"]["uid"], 3600, tokens.api_audiences)[0]

    async def request(self, method: str, path: str, *, token: str = ADMIN, json: Any = None,
                      headers: dict[str, str] | None = None) -> tuple[int, Any]:
        all_headers = {"Authorization": f"Bearer {token}", **(headers or {})}
        async with self.session.request(method, self.running.url + path, json=json, headers=all_headers) as resp:
            return resp.status, msgspec.json.decode(await resp.read())


async def _start(tmp_path: Path, mode: str = "RBAC") -> AsyncIterator[Server]:
    running = await runner.start(str(tmp_path / "data"), port=0, admin_token=ADMIN, authorization_mode=mode)
    session = aiohttp.ClientSession()
    try:
        yield Server(running, session)
    finally:
        await session.close()
        await running.stop()


@pytest_asyncio.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    async for s in _start(tmp_path):
        yield s


async def _setup(server: Server) -> None:
    for ns in ("a", "b"):
        assert (await server.request("POST", "/api/v1/namespaces", json={"metadata": {"name": ns}}))[0] == 201
    role = {"metadata": {"name": "reader"}, "rules": [
        {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "configmaps"]}]}
    assert (await server.request("POST", f"{RBAC}/namespaces/a/roles", json=role))[0] == 201
    binding = {"metadata": {"name": "rb"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                                      "name": "reader"},
               "subjects": [{"kind": "ServiceAccount", "name": "b", "namespace": "a"}]}
    assert (await server.request("POST", f"{RBAC}/namespaces/a/rolebindings", json=binding))[0] == 201


async def test_a_bound_account_reads_its_namespace_and_nothing_else(server: Server) -> None:
    await _setup(server)
    token = await server.token("a", "b")
    assert (await server.request("GET", "/api/v1/namespaces/a/pods", token=token))[0] == 200
    code, body = await server.request("GET", "/api/v1/namespaces/b/pods", token=token)
    assert code == 403
    assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": 'pods is forbidden: User "system:serviceaccount:a:b" cannot list resource "pods" '
                               'in API group "" in the namespace "b"',
                    "reason": "Forbidden", "details": {"kind": "pods"}, "code": 403}
    code, body = await server.request("DELETE", "/api/v1/namespaces/a/configmaps/x", token=token)
    assert code == 403 and body["message"] == (
        'configmaps "x" is forbidden: User "system:serviceaccount:a:b" cannot delete resource "configmaps" '
        'in API group "" in the namespace "a"')
    assert body["details"] == {"name": "x", "kind": "configmaps"}
    code, body = await server.request("GET", "/apis/apps/v1/deployments", token=token)
    assert code == 403 and body["message"].endswith(
        'cannot list resource "deployments" in API group "apps" at the cluster scope')
    code, body = await server.request("GET", "/metrics", token=token)
    assert code == 403 and body["message"] == 'forbidden: User "system:serviceaccount:a:b" cannot get path "/metrics"'
    # system:discovery and system:public-info-viewer hold for every authenticated user.
    assert (await server.request("GET", "/version", token=token))[0] == 200
    assert (await server.request("GET", "/api", token=token))[0] == 200


async def test_a_binding_is_seen_by_the_next_request_and_a_missing_role_is_the_reason(server: Server) -> None:
    await _setup(server)
    token = await server.token("a", "c")
    assert (await server.request("GET", "/api/v1/namespaces/a/pods", token=token))[0] == 403
    binding = {"metadata": {"name": "rc"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                                      "name": "ghost"},
               "subjects": [{"kind": "ServiceAccount", "name": "c"}]}  # namespace defaults to the binding's
    assert (await server.request("POST", f"{RBAC}/namespaces/a/rolebindings", json=binding))[0] == 201
    code, body = await server.request("GET", "/api/v1/namespaces/a/pods", token=token)
    assert code == 403 and body["message"].endswith(
        'in the namespace "a": RBAC: role.rbac.authorization.k8s.io "ghost" not found')
    role = {"metadata": {"name": "ghost"}, "rules": [{"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]}]}
    assert (await server.request("POST", f"{RBAC}/namespaces/a/roles", json=role))[0] == 201
    assert (await server.request("GET", "/api/v1/namespaces/a/pods", token=token))[0] == 200


async def test_impersonation_needs_the_impersonate_verb(server: Server) -> None:
    await _setup(server)
    token = await server.token("a", "b")
    headers = {"Impersonate-User": "system:serviceaccount:a:b"}
    code, body = await server.request("GET", "/api/v1/namespaces/a/pods", headers=headers)  # the admin may
    assert code == 200
    code, body = await server.request("GET", "/api/v1/namespaces/b/pods", headers=headers)
    assert code == 403 and 'User "system:serviceaccount:a:b" cannot list' in body["message"]
    code, body = await server.request("GET", "/api/v1/namespaces/a/pods", token=token,
                                      headers={"Impersonate-User": "jane"})
    # With ConstrainedImpersonation (on here) the first refusal is the user-info mode's.
    assert code == 403 and body["message"] == (
        'pods is forbidden: User "system:serviceaccount:a:b" cannot impersonate-on:user-info:list resource "pods" '
        'in API group "" in the namespace "a"')
    code, body = await server.request("GET", "/api/v1/namespaces/a/pods", headers={"Impersonate-Group": "g"})
    assert code == 400


async def test_without_constrained_impersonation_the_legacy_check_answers(tmp_path: Path) -> None:
    running = await runner.start(str(tmp_path / "data"), port=0, admin_token=ADMIN,
                                 feature_gates="ConstrainedImpersonation=false")
    async with aiohttp.ClientSession() as session:
        server = Server(running, session)
        try:
            code, body = await server.request("GET", "/api/v1/namespaces/default/pods", token=await server.token("a", "b"),
                                              headers={"Impersonate-User": "jane"})
            assert code == 403 and body["message"] == (
                'users "jane" is forbidden: User "system:serviceaccount:a:b" cannot impersonate resource "users" '
                'in API group "" at the cluster scope')
        finally:
            await running.stop()


async def test_access_reviews_answer_from_the_same_authorizer(server: Server) -> None:
    await _setup(server)
    sar = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": {
        "user": "system:serviceaccount:a:b", "groups": ["system:serviceaccounts", "system:authenticated"],
        "resourceAttributes": {"namespace": "a", "verb": "list", "resource": "pods"}}}
    code, body = await server.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", json=sar)
    assert code == 201 and body["status"] == {
        "allowed": True, "reason": 'RBAC: allowed by RoleBinding "rb/a" of Role "reader" to ServiceAccount "b/a"'}
    sar["spec"]["resourceAttributes"]["namespace"] = "b"
    code, body = await server.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", json=sar)
    assert code == 201 and body["status"] == {"allowed": False}
    code, body = await server.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", json={
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}}})
    assert code == 422 and body["message"] == (
        'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": '
        'at least one of user or group must be specified')
    rules_review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
                    "spec": {"namespace": "a"}}
    code, body = await server.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
                                      json=rules_review, token=await server.token("a", "b"))
    assert code == 201
    assert {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "configmaps"]} in \
        body["status"]["resourceRules"]
    assert not any("*" in r["resources"] for r in body["status"]["resourceRules"])
    assert body["status"]["incomplete"] is False


async def test_writing_roles_and_bindings_cannot_escalate(server: Server) -> None:
    await _setup(server)
    manager = {"metadata": {"name": "manager"}, "rules": [
        {"verbs": ["create", "update"], "apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles",
                                                                                                   "rolebindings"]},
        {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]}
    assert (await server.request("POST", f"{RBAC}/namespaces/a/roles", json=manager))[0] == 201
    binding = {"metadata": {"name": "m"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                                     "name": "manager"},
               "subjects": [{"kind": "ServiceAccount", "name": "m", "namespace": "a"}]}
    assert (await server.request("POST", f"{RBAC}/namespaces/a/rolebindings", json=binding))[0] == 201
    token = await server.token("a", "m")
    held = {"metadata": {"name": "held"}, "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]}
    assert (await server.request("POST", f"{RBAC}/namespaces/a/roles", json=held, token=token))[0] == 201
    more = {"metadata": {"name": "more"}, "rules": [
        {"verbs": ["get", "delete"], "apiGroups": [""], "resources": ["pods", "secrets"]}]}
    code, body = await server.request("POST", f"{RBAC}/namespaces/a/roles", json=more, token=token)
    assert code == 403
    assert body["message"] == (
        'roles.rbac.authorization.k8s.io "more" is forbidden: user "system:serviceaccount:a:m" '
        '(groups=["system:serviceaccounts" "system:serviceaccounts:a" "system:authenticated"]) is attempting to '
        'grant RBAC permissions not currently held:\n'
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}\n'
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}')
    assert (await server.request("GET", f"{RBAC}/namespaces/a/roles/more"))[0] == 404  # nothing stored
    # Binding a role whose rules one holds is fine; binding the admin role is not.
    own = {"metadata": {"name": "own"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                                   "name": "held"}, "subjects": [{"kind": "User", "name": "x"}]}
    assert (await server.request("POST", f"{RBAC}/namespaces/a/rolebindings", json=own, token=token))[0] == 201
    big = {"metadata": {"name": "big"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                                   "name": "cluster-admin"}, "subjects": [{"kind": "User", "name": "x"}]}
    code, body = await server.request("POST", f"{RBAC}/namespaces/a/rolebindings", json=big, token=token)
    assert code == 403 and "is attempting to grant RBAC permissions not currently held" in body["message"]
    # ... unless one may `bind` it.
    binder = {"metadata": {"name": "binder"}, "rules": [{"verbs": ["bind"], "apiGroups": ["rbac.authorization.k8s.io"],
                                                         "resources": ["clusterroles"], "resourceNames": ["cluster-admin"]}]}
    assert (await server.request("POST", f"{RBAC}/clusterroles", json=binder))[0] == 201
    grant = {"metadata": {"name": "m-binder"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                                                          "kind": "ClusterRole", "name": "binder"},
             "subjects": [{"kind": "ServiceAccount", "name": "m", "namespace": "a"}]}
    assert (await server.request("POST", f"{RBAC}/clusterrolebindings", json=grant))[0] == 201
    assert (await server.request("POST", f"{RBAC}/namespaces/a/rolebindings", json=big, token=token))[0] == 201


async def test_the_bootstrap_policy_is_seeded_with_upstreams_marks(server: Server) -> None:
    code, body = await server.request("GET", f"{RBAC}/clusterrolebindings/cluster-admin")
    assert code == 200
    assert body["subjects"] == [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "system:masters"}]
    assert body["metadata"]["labels"] == {"kubernetes.io/bootstrapping": "rbac-defaults"}
    assert body["metadata"]["annotations"] == {"rbac.authorization.kubernetes.io/autoupdate": "true"}
    code, view = await server.request("GET", f"{RBAC}/clusterroles/view")
    assert view["aggregationRule"] == {"clusterRoleSelectors": [
        {"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}}]}
    assert view["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-edit"] == "true"
    code, names = await server.request("GET", f"{RBAC}/clusterroles")
    stored = {item["metadata"]["name"] for item in names["items"]}
    assert {"admin", "edit", "system:basic-user", "system:discovery", "system:public-info-viewer",
            "system:kube-scheduler", "system:kube-controller-manager", "system:node", "system:node-proxier",
            "system:controller:namespace-controller", "system:controller:clusterrole-aggregation-controller"} <= stored
    assert len(bootstrap_policy.objects()) == (await server.request("GET", f"{RBAC}/clusterroles"))[1]["items"].__len__() \
        + len((await server.request("GET", f"{RBAC}/clusterrolebindings"))[1]["items"]) \
        + len((await server.request("GET", f"{RBAC}/roles"))[1]["items"]) \
        + len((await server.request("GET", f"{RBAC}/rolebindings"))[1]["items"])


async def test_always_allow_keeps_the_old_behaviour(tmp_path: Path) -> None:
    async for server in _start(tmp_path, "AlwaysAllow"):
        assert (await server.request("GET", "/api/v1/nodes", token=await server.token("a", "b")))[0] == 200


def test_bad_modes_are_refused_as_kube_apiserver_does() -> None:
    with pytest.raises(ValueError, match='authorization-mode "Webhookz" is not a valid mode'):
        chain.parse_modes("RBAC,Webhookz")
    with pytest.raises(ValueError, match="has mode specified more than once"):
        chain.parse_modes("RBAC,RBAC")


async def test_a_resource_names_rule_allows_a_list_pinned_to_that_name(server: Server) -> None:
    await _setup(server)
    role = {"metadata": {"name": "one"}, "rules": [{"verbs": ["list", "watch"], "apiGroups": [""],
                                                    "resources": ["secrets"], "resourceNames": ["s1"]}]}
    assert (await server.request("POST", f"{RBAC}/namespaces/a/roles", json=role))[0] == 201
    binding = {"metadata": {"name": "one"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                                       "name": "one"},
               "subjects": [{"kind": "ServiceAccount", "name": "b", "namespace": "a"}]}
    assert (await server.request("POST", f"{RBAC}/namespaces/a/rolebindings", json=binding))[0] == 201
    token = await server.token("a", "b")
    pinned = "/api/v1/namespaces/a/secrets?fieldSelector=metadata.name%3Ds1"
    assert (await server.request("GET", pinned, token=token))[0] == 200
    code, body = await server.request("GET", "/api/v1/namespaces/a/secrets?fieldSelector=metadata.name%3Ds2",
                                      token=token)
    assert code == 403 and body["message"].startswith('secrets "s2" is forbidden')
    assert (await server.request("GET", "/api/v1/namespaces/a/secrets", token=token))[0] == 403


async def _grant(server: Server, name: str, rules: list[dict], account: str, namespace: str = "") -> None:
    """A ClusterRole (namespace "") or Role with `rules`, bound to service account a/<account>."""
    ref_kind = "Role" if namespace else "ClusterRole"
    base = f"{RBAC}/namespaces/{namespace}" if namespace else RBAC
    role_path, binding_path = (f"{base}/roles", f"{base}/rolebindings") if namespace else (
        f"{base}/clusterroles", f"{base}/clusterrolebindings")
    assert (await server.request("POST", role_path, json={"metadata": {"name": name}, "rules": rules}))[0] == 201
    binding = {"metadata": {"name": name}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": ref_kind,
                                                      "name": name},
               "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": "a"}]}
    assert (await server.request("POST", binding_path, json=binding))[0] == 201


async def test_constrained_impersonation_needs_impersonate_on_as_well(server: Server) -> None:
    await _setup(server)
    # deputy may impersonate jane's identity (impersonate:user-info) but, so far, for no action.
    await _grant(server, "deputy-identity", [{"verbs": ["impersonate:user-info"], "apiGroups": ["authentication.k8s.io"],
                                              "resources": ["users"], "resourceNames": ["jane"]}], "deputy")
    jane = {"metadata": {"name": "jane"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                                     "name": "reader"}, "subjects": [{"kind": "User", "name": "jane"}]}
    assert (await server.request("POST", f"{RBAC}/namespaces/a/rolebindings", json=jane))[0] == 201
    token = await server.token("a", "deputy")
    as_jane = {"Impersonate-User": "jane"}
    code, body = await server.request("GET", "/api/v1/namespaces/a/pods", token=token, headers=as_jane)
    assert code == 403 and body["message"] == (
        'pods is forbidden: User "system:serviceaccount:a:deputy" cannot impersonate-on:user-info:list resource '
        '"pods" in API group "" in the namespace "a"')
    # impersonate-on for listing pods in a: now deputy acts as jane there, and only for that.
    await _grant(server, "deputy-action", [{"verbs": ["impersonate-on:user-info:list"], "apiGroups": [""],
                                            "resources": ["pods"]}], "deputy", namespace="a")
    assert (await server.request("GET", "/api/v1/namespaces/a/pods", token=token, headers=as_jane))[0] == 200
    code, body = await server.request("GET", "/api/v1/namespaces/a/configmaps", token=token, headers=as_jane)
    assert code == 403 and "cannot impersonate-on:user-info:list resource \"configmaps\"" in body["message"]
    code, body = await server.request("GET", "/api/v1/namespaces/a/pods", token=token,
                                      headers={"Impersonate-User": "john"})
    assert code == 403 and body["message"] == (
        'users.authentication.k8s.io "john" is forbidden: User "system:serviceaccount:a:deputy" cannot '
        'impersonate:user-info resource "users" in API group "authentication.k8s.io" at the cluster scope')
    # The impersonated request is still jane's to be allowed: jane cannot list pods in b.
    await _grant(server, "deputy-action-b", [{"verbs": ["impersonate-on:user-info:list"], "apiGroups": [""],
                                              "resources": ["pods"]}], "deputy", namespace="b")
    code, body = await server.request("GET", "/api/v1/namespaces/b/pods", token=token, headers=as_jane)
    assert code == 403 and body["message"].startswith('pods is forbidden: User "jane" cannot list')
    # Constrained impersonation never reaches system:masters.
    await _grant(server, "deputy-groups", [{"verbs": ["impersonate:user-info"], "apiGroups": ["authentication.k8s.io"],
                                            "resources": ["groups"]}], "deputy")
    code, body = await server.request("GET", "/api/v1/namespaces/a/pods", token=token,
                                      headers={"Impersonate-User": "jane", "Impersonate-Group": "system:masters"})
    assert code == 403 and body["message"].endswith("impersonating the system:masters group is not allowed")


async def test_a_restart_puts_back_lost_default_rules_unless_autoupdate_is_off(tmp_path: Path) -> None:
    async def start() -> Any:
        return await runner.start(str(tmp_path / "data"), port=0, admin_token=ADMIN)

    running = await start()
    async with aiohttp.ClientSession() as session:
        server = Server(running, session)
        for name, autoupdate in (("system:basic-user", "true"), ("system:discovery", "false")):
            code, role = await server.request("GET", f"{RBAC}/clusterroles/{name}")
            role["rules"] = [{"verbs": ["get"], "apiGroups": [""], "resources": ["nothing"]}]
            role["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"] = autoupdate
            assert (await server.request("PUT", f"{RBAC}/clusterroles/{name}", json=role))[0] == 200
    await running.stop()
    running = await start()
    async with aiohttp.ClientSession() as session:
        server = Server(running, session)
        try:
            _, basic = await server.request("GET", f"{RBAC}/clusterroles/system:basic-user")
            assert basic["rules"][0]["resources"] == ["nothing"]  # kept: reconcile adds, never removes
            assert {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
                    "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]} in basic["rules"]
            _, discovery = await server.request("GET", f"{RBAC}/clusterroles/system:discovery")
            assert discovery["rules"] == [{"verbs": ["get"], "apiGroups": [""], "resources": ["nothing"]}]
        finally:
            await running.stop()


async def test_the_index_rereads_only_the_namespace_that_changed(server: Server) -> None:
    await _setup(server)
    token = await server.token("a", "b")
    index = server.running.server.extra[chain.AUTHORIZER].rbac.index
    assert (await server.request("GET", "/api/v1/namespaces/a/pods", token=token))[0] == 200
    before = index.rereads
    for _ in range(3):  # nothing RBAC changed: nothing is read again
        assert (await server.request("GET", "/api/v1/namespaces/a/pods", token=token))[0] == 200
    assert index.rereads == before
    other = {"metadata": {"name": "elsewhere"}, "rules": []}
    assert (await server.request("POST", f"{RBAC}/namespaces/b/roles", json=other))[0] == 201
    assert (await server.request("GET", "/api/v1/namespaces/a/pods", token=token))[0] == 200
    assert index.rereads == before  # b's Roles are not a's
    assert (await server.request("POST", f"{RBAC}/namespaces/a/roles", json=other))[0] == 201
    assert (await server.request("GET", "/api/v1/namespaces/a/pods", token=token))[0] == 200
    assert index.rereads == before + 1  # a's Roles, and only them
