"""The co-processes' own credentials: who each one is to the API server, instead of the admin.

Upstream's identities (`certs.component_identity`): `system:kube-scheduler`,
`system:kube-controller-manager` (whose controllers then act as their own ServiceAccounts,
`controllers/client_builder.py`), and `system:node:<name>` in `system:nodes` per kubelet; and
haru's `haru:nodes-host`, the hollow nodes' process reading for all its kubelets (`nodes/host.py`),
with only what those reads need (`nodes_host_grant`). Over HTTPS (`haru up`) a client certificate
signed by the cluster CA in its own kubeconfig, as kubeadm's scheduler.conf, controller-manager.conf
and kubelet.conf (`DATA_DIR/scheduler.kubeconfig`, `DATA_DIR/controllers.kubeconfig`,
`DATA_DIR/nodes-host.kubeconfig`, `DATA_DIR/kubelets/<node>.kubeconfig`); on the embedded
cluster's plain-HTTP loopback socket a static bearer token (`pki/component-tokens.csv`,
`--token-auth-file` format). Called by `cli.up` (also `grant_result_recording` for
`--record-results`) and `embedded._start`.
"""

from __future__ import annotations

import os
import secrets

from client import errors as client_errors
from client.rest import RestClient
from cluster import certs, kubeconfig

TOKENS_FILE = "component-tokens.csv"
SCHEDULER = "scheduler"
CONTROLLERS = "controllers"
NODES_HOST = "nodes-host"


def kubeconfig_path(data_dir: str, component: str, node_name: str = "") -> str:
    if component == "node":
        return os.path.join(data_dir, "kubelets", f"{node_name}.kubeconfig")
    return os.path.join(data_dir, f"{component}.kubeconfig")


def write_certificate_kubeconfig(pki: certs.Pki, data_dir: str, url: str, component: str,
                                 node_name: str = "") -> str:
    """A kubeconfig for the component with a fresh client certificate (HTTPS); returns its path."""
    user, groups = certs.component_identity(component, node_name)
    path = kubeconfig_path(data_dir, component, node_name)
    kubeconfig.write(path, url, "", pki.ca_pem(), pki.client_certificate(user, groups), user_name=user)
    return path


def token_file(data_dir: str, components: list[tuple[str, str]]) -> tuple[str, dict[tuple[str, str], str]]:
    """Write a token file naming each (component, node name); returns its path and the tokens.

    Fresh tokens each start: the embedded cluster's loopback socket lives only as long as it does."""
    tokens: dict[tuple[str, str], str] = {}
    lines = []
    for component, node_name in components:
        user, groups = certs.component_identity(component, node_name)
        token = secrets.token_urlsafe(32)
        tokens[(component, node_name)] = token
        lines.append(f'{token},{user},{user},"{",".join(groups)}"' if groups else f"{token},{user},{user}")
    path = os.path.join(data_dir, "pki", TOKENS_FILE)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    partial = path + ".partial"
    with open(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(partial, path)
    return path, tokens


def write_token_kubeconfig(data_dir: str, url: str, component: str, token: str, node_name: str = "") -> str:
    user, _ = certs.component_identity(component, node_name)
    path = kubeconfig_path(data_dir, component, node_name)
    kubeconfig.write(path, url, token, None, user_name=user)
    return path


_RBAC_GROUP = "rbac.authorization.k8s.io"
_RBAC = f"/apis/{_RBAC_GROUP}/v1"
Grant = list[tuple[str, dict[str, object]]]


def _grant(name: str, component: str, rules: list[dict[str, object]]) -> Grant:
    """A ClusterRole `name` with `rules` and its ClusterRoleBinding to the component's user."""
    user, _ = certs.component_identity(component)
    role = {"apiVersion": f"{_RBAC_GROUP}/v1", "kind": "ClusterRole", "metadata": {"name": name}, "rules": rules}
    binding = {"apiVersion": f"{_RBAC_GROUP}/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name},
               "roleRef": {"apiGroup": _RBAC_GROUP, "kind": "ClusterRole", "name": name},
               "subjects": [{"apiGroup": _RBAC_GROUP, "kind": "User", "name": user}]}
    return [(f"{_RBAC}/clusterroles", role), (f"{_RBAC}/clusterrolebindings", binding)]


async def _ensure(client: RestClient, grant: Grant) -> None:
    for path, body in grant:
        try:
            await client.request("POST", path, body=body)
        except client_errors.APIError as err:
            if err.code != 409:
                raise


# `--record-results` writes each pod's plugin answers into its annotations (kube-scheduler-simulator's
# recorder); upstream's system:kube-scheduler may write only pods/status, so haru up grants this one
# extra verb, visibly, by its own ClusterRole and binding, and only when the flag asks for it.
RESULTS_ROLE = "haru:scheduler-results"


def results_grant() -> Grant:
    return _grant(RESULTS_ROLE, SCHEDULER, [{"apiGroups": [""], "resources": ["pods"], "verbs": ["patch"]}])


async def grant_result_recording(client: RestClient) -> None:
    await _ensure(client, results_grant())


# The nodes host's shared client (`nodes/host.py`): one pod feed and one Node watch for every
# kubelet, the DRA driver's slices and claim statuses, the labels a kubelet may not set on its own
# Node, PodGroup lookups, and the kubelet endpoint's token and access reviews. Upstream has no such
# identity (each kubelet watches its own pods as system:node:<name>); this role is that deviation,
# and nothing more: it may not, for one, delete anything but its ResourceSlices.
NODES_HOST_ROLE = "haru:nodes-host"


def nodes_host_grant() -> Grant:
    return _grant(NODES_HOST_ROLE, NODES_HOST, [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "watch"]},
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "patch", "watch"]},
        {"apiGroups": ["resource.k8s.io"], "resources": ["resourceslices"],
         "verbs": ["create", "delete", "list", "update"]},
        {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims/status"], "verbs": ["patch"]},
        {"apiGroups": ["scheduling.k8s.io"], "resources": ["podgroups"], "verbs": ["get"]},
        {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
        {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
    ])


async def grant_nodes_host(client: RestClient) -> None:
    await _ensure(client, nodes_host_grant())
