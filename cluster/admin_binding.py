"""The `kubeadm:cluster-admins` ClusterRoleBinding that gives the admin kubeconfig its rights.

kubeadm's admin.conf (since 1.29) holds a certificate in group `kubeadm:cluster-admins`, and
`kubeadm init` binds that group to `cluster-admin` (with the super-admin credential, which is in
system:masters). `haru up` does the same with the admin token once the server answers. A server
without the RBAC API yet (404) needs no binding: everyone authenticated may do everything there.
An existing binding is left as the admin shaped it. Called by `cli.up` and `embedded._start`.
"""

from __future__ import annotations

from client import errors as client_errors
from client.rest import RestClient

NAME = "kubeadm:cluster-admins"
_PATH = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"


def manifest() -> dict[str, object]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": NAME},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": NAME}],
    }


async def ensure(client: RestClient) -> bool:
    """True if the binding exists now; False if the server has no RBAC API to bind in."""
    try:
        await client.request("POST", _PATH, body=manifest())
    except client_errors.APIError as err:
        if err.code == 409:
            return True
        if err.code == 404 and err.reason in ("NotFound", ""):
            return False
        raise
    return True
