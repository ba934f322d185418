"""The controllers' and the nodes host's identities against `haru up` (HTTPS, `Node,RBAC`), with
kubectl v1.36.3.

The controllers co-process runs with `DATA_DIR/controllers.kubeconfig`, a client certificate
`system:kube-controller-manager` (kubeadm's controller-manager.conf), and with
`--use-service-account-credentials` each controller asks for a token of its own ServiceAccount in
kube-system, bound to its system:controller:<name> role: the Deployment controller's may create
ReplicaSets, the controller manager's own identity may not. The hollow nodes' shared client runs
with `DATA_DIR/nodes-host.kubeconfig` as `haru:nodes-host`: it lists pods, and deleting a namespace
is refused with upstream's 403 text.
"""

from __future__ import annotations

import pytest

from cluster import identities
from tests.conftest import Cluster
from tests.e2e.polling import until

pytestmark = pytest.mark.slow


def _as(haru: Cluster, kubeconfig: str, *args: str) -> tuple[int, str, str]:
    result = haru.kubectl(*args, check=False, env={"KUBECONFIG": kubeconfig})
    return result.returncode, result.stdout.strip(), result.stderr.strip()


def _whoami(haru: Cluster, component: str) -> str:
    return _as(haru, identities.kubeconfig_path(haru.data_dir, component), "auth", "whoami", "-o",
               "jsonpath={.status.userInfo.username}")[1]


def _can(haru: Cluster, user: str, *args: str) -> str:
    return haru.kubectl("auth", "can-i", *args, f"--as={user}", check=False).stdout.strip()


def test_the_controllers_are_the_controller_manager_and_each_its_own_service_account(haru: Cluster) -> None:
    assert _whoami(haru, identities.CONTROLLERS) == "system:kube-controller-manager"
    accounts = ("deployment-controller", "replicaset-controller", "generic-garbage-collector", "node-controller",
                "namespace-controller", "persistent-volume-binder", "root-ca-cert-publisher")
    until(lambda: haru.kubectl("get", "serviceaccounts", "-n", "kube-system", *accounts, check=False).returncode == 0,
          "every controller's ServiceAccount in kube-system")
    assert _can(haru, "system:serviceaccount:kube-system:deployment-controller", "create", "replicasets") == "yes"
    assert _can(haru, "system:kube-controller-manager", "create", "replicasets") == "no"
    assert _can(haru, "system:kube-controller-manager", "list", "replicasets") == "yes"


def test_the_nodes_host_lists_pods_and_may_not_delete_a_namespace(haru: Cluster) -> None:
    host = identities.kubeconfig_path(haru.data_dir, identities.NODES_HOST)
    assert _whoami(haru, identities.NODES_HOST) == "haru:nodes-host"
    assert _as(haru, host, "get", "pods", "-A")[0] == 0
    code, _, err = _as(haru, host, "delete", "namespace", "default")
    assert code != 0
    assert err == ('Error from server (Forbidden): namespaces "default" is forbidden: User "haru:nodes-host" cannot '
                   'delete resource "namespaces" in API group "" in the namespace "default"')
