"""Who the controllers are in an embedded cluster, driven with the Python client: with
`--use-service-account-credentials` (on, as kubeadm sets it) a Deployment's ReplicaSet is created
as system:serviceaccount:kube-system:deployment-controller and its pods as the ReplicaSet
controller's account, a claim's volume as the PV binder's, and none of the controllers' requests
is refused; with it off they arrive
as system:kube-controller-manager. The nodes host's shared client, haru:nodes-host, reads pods and
may not delete a namespace. The server's authorizer is wrapped to record every decision."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as pyclient, config as pyconfig
from kubernetes.client.rest import ApiException

from apiserver.authorization import chain
from cluster import identities
from cluster.embedded import EmbeddedCluster, Options

pytestmark = pytest.mark.slow
ACCOUNT = "system:serviceaccount:kube-system:"
Seen = list[tuple[str, str, str, str, bool]]


def _record(cluster: EmbeddedCluster) -> Seen:
    """(user, verb, resource, subresource, allowed) of every request the server authorizes from now."""
    authorizer: chain.Authorizer = cluster._parts[0].server.extra[chain.AUTHORIZER]
    seen: Seen = []
    original = authorizer.authorize

    def recording(attrs: Any) -> chain.Decision:
        decision = original(attrs)
        seen.append((attrs.user.name, attrs.verb, attrs.resource, attrs.subresource, decision.allowed))
        return decision

    authorizer.authorize = recording  # type: ignore[method-assign]
    return seen


def _until(check: Any, what: str, timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, what
        time.sleep(0.05)
    return found


def _deployment(name: str) -> dict[str, Any]:
    labels = {"app": name}
    return {"metadata": {"name": name}, "spec": {"replicas": 2, "selector": {"matchLabels": labels}, "template": {
        "metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}


def test_each_controller_writes_as_its_own_service_account(tmp_path: Path) -> None:
    cluster = EmbeddedCluster.start(str(tmp_path / "cluster"), Options(nodes=1))
    api = pyconfig.new_client_from_config(config_file=cluster.kubeconfig)
    try:
        seen = _record(cluster)
        apps, core = pyclient.AppsV1Api(api), pyclient.CoreV1Api(api)
        apps.create_namespaced_deployment("default", _deployment("web"))
        # The volume binder provisions and binds with its role's verbs (update, not patch, of claims).
        pyclient.StorageV1Api(api).create_storage_class({"metadata": {"name": "local"},
                                                         "provisioner": "haru.dev/hostpath"})
        claim = {"storageClassName": "local", "accessModes": ["ReadWriteOnce"],
                 "resources": {"requests": {"storage": "1Gi"}}}
        core.create_namespaced_persistent_volume_claim("default", {"metadata": {"name": "data"}, "spec": claim})
        _until(lambda: (apps.read_namespaced_deployment_status("web", "default").status.available_replicas or 0) == 2,
               "the Deployment's two pods are not available")
        _until(lambda: core.read_namespaced_persistent_volume_claim("data", "default").status.phase == "Bound",
               "the claim is not bound")
        assert {u for u, v, r, s, _ in seen if (v, r, s) == ("create", "persistentvolumes", "")} == {
            ACCOUNT + "persistent-volume-binder"}
        writes = (("create", "replicasets", ""), ("create", "pods", ""), ("update", "deployments", "status"),
                  ("update", "replicasets", "status"))
        writers = {(verb, resource, sub): {u for u, v, r, s, _ in seen if (v, r, s) == (verb, resource, sub)}
                   for verb, resource, sub in writes}
        assert writers == {("create", "replicasets", ""): {ACCOUNT + "deployment-controller"},
                           ("create", "pods", ""): {ACCOUNT + "replicaset-controller"},
                           ("update", "deployments", "status"): {ACCOUNT + "deployment-controller"},
                           ("update", "replicasets", "status"): {ACCOUNT + "replicaset-controller"}}
        refused = [s for s in seen if (s[0].startswith(ACCOUNT) or s[0] == "system:kube-controller-manager")
                   and not s[4]]
        assert refused == []
        account = core.read_namespaced_service_account("deployment-controller", "kube-system")
        assert account.metadata.name == "deployment-controller"
        _the_nodes_host_reads_pods_and_may_not_delete_a_namespace(cluster)
    finally:
        api.close()
        cluster.stop()


def _the_nodes_host_reads_pods_and_may_not_delete_a_namespace(cluster: EmbeddedCluster) -> None:
    host = pyconfig.new_client_from_config(config_file=identities.kubeconfig_path(cluster.data_dir,
                                                                                identities.NODES_HOST))
    try:
        core = pyclient.CoreV1Api(host)
        assert {p.metadata.name.split("-")[0] for p in core.list_pod_for_all_namespaces().items} == {"web"}
        with pytest.raises(ApiException) as refused:
            core.delete_namespace("default")
        assert refused.value.status == 403
        assert ('User \\"haru:nodes-host\\" cannot delete resource \\"namespaces\\" in API group \\"\\" '
                'in the namespace \\"default\\"') in refused.value.body
    finally:
        host.close()


def test_without_the_flag_the_controllers_are_the_controller_manager(tmp_path: Path) -> None:
    cluster = EmbeddedCluster.start(str(tmp_path / "cluster"), Options(nodes=0, service_account_credentials=False))
    api = pyconfig.new_client_from_config(config_file=cluster.kubeconfig)
    try:
        seen = _record(cluster)
        core = pyclient.CoreV1Api(api)
        core.create_namespace({"metadata": {"name": "team"}})
        _until(lambda: [a for a in core.list_namespaced_service_account("team").items if a.metadata.name == "default"],
               "no default ServiceAccount in team")
        assert {u for u, v, r, s, _ in seen if (v, r, s) == ("create", "serviceaccounts", "")} == {
            "system:kube-controller-manager"}
        with pytest.raises(ApiException) as absent:
            core.read_namespaced_service_account("deployment-controller", "kube-system")
        assert absent.value.status == 404
    finally:
        api.close()
        cluster.stop()
