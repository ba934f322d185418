"""The co-processes' own credentials: who each one is to the API server, instead of the admin.

Upstream's identities (`certs.component_identity`): `system:kube-scheduler`, and `system:node:<name>`
in `system:nodes` per kubelet. Over HTTPS (`haru up`) a client certificate signed by the cluster
CA in its own kubeconfig, as kubeadm's scheduler.conf and kubelet.conf (`DATA_DIR/scheduler.kubeconfig`,
`DATA_DIR/kubelets/<node>.kubeconfig`); on the embedded cluster's plain-HTTP loopback socket a
static bearer token (`pki/component-tokens.csv`, `--token-auth-file` format). The controllers
and the nodes host's shared reads still run as the admin (issue 14). Called by `cli.up`
(also `grant_result_recording` for `--record-results`) and `embedded._start`.
"""

from __future__ import annotations

import os
import secrets

from client import errors as client_errors
from client.rest import RestClient
from cluster import certs, kubeconfig

TOKENS_FILE = "component-tokens.csv"
SCHEDULER = "scheduler"


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


# `--record-results` writes each pod's plugin answers into its annotations (kube-scheduler-simulator's
# recorder); upstream's system:kube-scheduler may write only pods/status, so haru up grants this one
# extra verb, visibly, by its own ClusterRole and binding, and only when the flag asks for it.
RESULTS_ROLE = "haru:scheduler-results"
_RBAC = "/apis/rbac.authorization.k8s.io/v1"


def results_grant() -> list[tuple[str, dict[str, object]]]:
    user, _ = certs.component_identity(SCHEDULER)
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": RESULTS_ROLE},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["patch"]}]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": RESULTS_ROLE},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": RESULTS_ROLE},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]}
    return [(f"{_RBAC}/clusterroles", role), (f"{_RBAC}/clusterrolebindings", binding)]


async def grant_result_recording(client: RestClient) -> None:
    for path, body in results_grant():
        try:
            await client.request("POST", path, body=body)
        except client_errors.APIError as err:
            if err.code != 409:
                raise
