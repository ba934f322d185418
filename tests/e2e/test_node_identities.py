"""Kubelet and scheduler identities against `haru up` (HTTPS, `Node,RBAC`), with kubectl v1.36.3.

Each kubelet runs with a client certificate `system:node:<name>` in `system:nodes` that haru up
signs with the cluster CA into `DATA_DIR/kubelets/<node>.kubeconfig`, as kubeadm's kubelet.conf:
node A's cannot read or patch node B or renew B's Lease (upstream's 403 texts), and can patch its
own Node status and renew its own Lease. The
scheduler runs as `system:kube-scheduler` from `DATA_DIR/scheduler.kubeconfig`: it may bind pods and
may not create them, and a pod is scheduled and runs.
"""

from __future__ import annotations

import datetime
import os

import pytest
from kubernetes import client as pyclient, config as pyconfig
from kubernetes.client.rest import ApiException

from cluster import identities
from tests.conftest import Cluster
from tests.e2e.polling import until

pytestmark = pytest.mark.slow


def _as(haru: Cluster, kubeconfig: str, *args: str) -> tuple[int, str, str]:
    result = haru.kubectl(*args, check=False, env={"KUBECONFIG": kubeconfig})
    return result.returncode, result.stdout.strip(), result.stderr.strip()


@pytest.fixture(scope="module")
def nodes(haru: Cluster) -> list[str]:
    names = haru.kubectl("get", "nodes", "-o", "jsonpath={.items[*].metadata.name}").stdout.split()
    assert len(names) >= 2
    return names[:2]


@pytest.fixture(scope="module")
def kubelet_a(haru: Cluster, nodes: list[str]) -> str:
    """The kubeconfig haru up wrote for node A's kubelet, the one its hollow kubelet runs with."""
    path = identities.kubeconfig_path(haru.data_dir, "node", nodes[0])
    assert os.path.exists(path)
    return path


def test_a_kubelets_credentials_cannot_patch_or_read_another_node(haru: Cluster, nodes: list[str],
                                                                   kubelet_a: str) -> None:
    a, b = nodes
    assert _as(haru, kubelet_a, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")[1] == f"system:node:{a}"
    # kubectl patch reads the object first: the Node authorizer refuses that read (NodeRestriction
    # would refuse the patch itself: tests/apiserver/authorization/test_node_authorizer.py).
    forbidden = (f'Error from server (Forbidden): nodes "{b}" is forbidden: User "system:node:{a}" cannot get '
                 f"resource \"nodes\" in API group \"\" at the cluster scope: node '{a}' cannot read '{b}', only "
                 "its own Node object")
    for args in (("patch", "node", b, "--type=merge", "-p", '{"metadata":{"labels":{"x":"y"}}}'), ("get", "node", b)):
        code, _, err = _as(haru, kubelet_a, *args)
        assert code != 0 and err == forbidden, args
    code, _, err = _as(haru, kubelet_a, "patch", "lease", b, "-n", "kube-node-lease", "--type=merge",
                       "-p", '{"spec":{"holderIdentity":"x"}}')
    assert code != 0 and err.endswith("can only access node lease with the same name as the requesting node")


def test_a_kubelet_patches_its_own_node_status_and_renews_its_lease(haru: Cluster, nodes: list[str],
                                                                     kubelet_a: str) -> None:
    a = nodes[0]
    assert _as(haru, kubelet_a, "get", "node", a, "-o", "name")[1] == f"node/{a}"
    # kubectl patch --subresource=status reads nodes/status first, which upstream's Node authorizer
    # does not grant a kubelet (it only writes it): the kubelet's own write is a plain PATCH.
    api = pyclient.CoreV1Api(pyconfig.new_client_from_config(config_file=kubelet_a))
    try:
        patched = api.patch_node_status(a, {"status": {"daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}}}})
        assert patched.metadata.name == a
        with pytest.raises(ApiException) as refused:
            api.patch_node_status(nodes[1], {"status": {"daemonEndpoints": {"kubeletEndpoint": {"Port": 1}}}})
        assert refused.value.status == 403
        assert f'node \\"{a}\\" is not allowed to modify node \\"{nodes[1]}\\"' in refused.value.body
    finally:
        api.api_client.close()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    code, out, err = _as(haru, kubelet_a, "patch", "lease", a, "-n", "kube-node-lease", "--type=merge",
                         "-p", f'{{"spec":{{"renewTime":"{now}"}}}}')
    assert code == 0, err
    # NodeRestriction: its own Node, but no labels under node-restriction.kubernetes.io/.
    code, _, err = _as(haru, kubelet_a, "label", "node", a, "node-restriction.kubernetes.io/pool=x")
    assert code != 0 and err.endswith("is not allowed to modify labels: node-restriction.kubernetes.io/pool")


def test_the_scheduler_is_system_kube_scheduler_and_binds_a_pod(haru: Cluster) -> None:
    path = os.path.join(haru.data_dir, "scheduler.kubeconfig")
    assert _as(haru, path, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")[1] == "system:kube-scheduler"
    assert _as(haru, path, "auth", "can-i", "create", "pods", "--subresource=binding", "-n", "default")[1] == "yes"
    assert _as(haru, path, "auth", "can-i", "create", "pods", "-n", "default")[1] == "no"
    haru.kubectl("run", "placed", "--image=busybox", "--restart=Never", "--", "sleep", "3600")
    until(lambda: haru.kubectl("get", "pod", "placed", "-o", "jsonpath={.status.phase}").stdout == "Running",
          "the pod runs")
    haru.kubectl("delete", "pod", "placed", "--wait=false")
