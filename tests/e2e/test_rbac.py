"""RBAC as kubectl v1.36.3 and the `kubernetes` 36.0.3 Python client see it against `haru up`.

A service account bound to `view` in one namespace reads there and nothing else, and is told so with
kube-apiserver's 403 text; the aggregation controller has filled `view` by then; `kubectl auth
can-i --list --as=system:serviceaccount:...` lists exactly what the account's bindings grant (its
own Role, plus what every authenticated user holds); the admin impersonates, a plain account
cannot.
"""

from __future__ import annotations


import pytest
from kubernetes import client as pyclient, config as pyconfig
from kubernetes.client.rest import ApiException

from tests.conftest import Cluster
from tests.e2e.polling import until

pytestmark = pytest.mark.slow



@pytest.fixture(scope="module")
def viewer(haru: Cluster) -> str:
    """A token for tenant-a/reader, bound to the `view` ClusterRole in tenant-a only."""
    for ns in ("tenant-a", "tenant-b"):
        haru.kubectl("create", "namespace", ns)
    haru.kubectl("create", "serviceaccount", "reader", "-n", "tenant-a")
    haru.kubectl("create", "rolebinding", "reader-view", "--clusterrole=view", "--serviceaccount=tenant-a:reader",
                 "-n", "tenant-a")
    haru.kubectl("create", "configmap", "settings", "--from-literal=k=v", "-n", "tenant-a")
    haru.kubectl("create", "configmap", "secret-ish", "--from-literal=k=v", "-n", "tenant-b")
    # view is filled by the aggregation controller from system:aggregate-to-view.
    until(lambda: "configmaps" in haru.kubectl("get", "clusterrole", "view", "-o",
                                                 "jsonpath={.rules[*].resources}").stdout, "view aggregated")
    return haru.kubectl("create", "token", "reader", "-n", "tenant-a").stdout.strip()


@pytest.fixture(scope="module")
def viewer_kubeconfig(haru: Cluster, viewer: str) -> str:
    """The viewer's token alone: with `--token` kubectl still presents the admin kubeconfig's
    certificate, which authenticates first (kubernetes/kubectl#1657), as upstream's does."""
    return haru.token_kubeconfig(viewer)


def _token_only(configuration: pyclient.Configuration, token: str) -> None:
    """Send `token` and no client certificate (the kubeconfig's would authenticate first)."""
    configuration.refresh_api_key_hook = None  # it would put the kubeconfig's admin token back
    configuration.cert_file = configuration.key_file = None
    configuration.api_key = {"BearerToken": f"Bearer {token}"}


def _viewer(kubeconfig: str) -> dict[str, str]:
    return {"KUBECONFIG": kubeconfig}


def test_kubectl_as_a_view_user_reads_its_namespace_and_nothing_else(haru: Cluster, viewer_kubeconfig: str) -> None:
    got = haru.kubectl("get", "configmap", "settings", "-n", "tenant-a", "-o", "jsonpath={.data.k}", env=_viewer(viewer_kubeconfig))
    assert got.stdout == "v"
    other = haru.kubectl("get", "configmaps", "-n", "tenant-b", env=_viewer(viewer_kubeconfig), check=False)
    assert other.returncode == 1
    assert other.stderr.strip() == (
        'Error from server (Forbidden): configmaps is forbidden: User "system:serviceaccount:tenant-a:reader" '
        'cannot list resource "configmaps" in API group "" in the namespace "tenant-b"')
    write = haru.kubectl("delete", "configmap", "settings", "-n", "tenant-a", env=_viewer(viewer_kubeconfig), check=False)
    assert write.returncode == 1 and write.stderr.strip() == (
        'Error from server (Forbidden): configmaps "settings" is forbidden: User '
        '"system:serviceaccount:tenant-a:reader" cannot delete resource "configmaps" in API group "" in the '
        'namespace "tenant-a"')
    secrets = haru.kubectl("get", "secrets", "-n", "tenant-a", env=_viewer(viewer_kubeconfig), check=False)
    assert secrets.returncode == 1 and 'cannot list resource "secrets"' in secrets.stderr  # view has no secrets
    nodes = haru.kubectl("get", "nodes", env=_viewer(viewer_kubeconfig), check=False)
    assert nodes.stderr.strip() == (
        'Error from server (Forbidden): nodes is forbidden: User "system:serviceaccount:tenant-a:reader" cannot '
        'list resource "nodes" in API group "" at the cluster scope')
    assert haru.kubectl("get", "configmap", "settings", "-n", "tenant-a").returncode == 0  # the admin still may
    assert haru.kubectl("auth", "can-i", "list", "pods", "-n", "tenant-a", env=_viewer(viewer_kubeconfig)).stdout.strip() == "yes"
    denied = haru.kubectl("auth", "can-i", "list", "pods", "-n", "tenant-b", env=_viewer(viewer_kubeconfig), check=False)
    assert denied.returncode == 1 and denied.stdout.strip() == "no"


def test_the_python_client_as_a_view_user(haru: Cluster, viewer: str) -> None:
    configuration = pyclient.Configuration()
    pyconfig.load_kube_config(config_file=haru.kubeconfig, client_configuration=configuration)
    _token_only(configuration, viewer)
    api = pyclient.CoreV1Api(pyclient.ApiClient(configuration))
    names = [c.metadata.name for c in api.list_namespaced_config_map("tenant-a").items]
    assert "settings" in names
    with pytest.raises(ApiException) as refused:
        api.list_namespaced_config_map("tenant-b")
    assert refused.value.status == 403
    assert refused.value.body and '"reason":"Forbidden"' in refused.value.body.replace(" ", "")
    assert ('configmaps is forbidden: User \\"system:serviceaccount:tenant-a:reader\\" cannot list resource '
            '\\"configmaps\\" in API group \\"\\" in the namespace \\"tenant-b\\"') in refused.value.body
    with pytest.raises(ApiException) as write:
        api.create_namespaced_config_map("tenant-a", {"metadata": {"name": "nope"}, "data": {}})
    assert write.value.status == 403
    assert haru.kubectl("get", "configmap", "nope", "-n", "tenant-a", check=False).returncode == 1  # not stored


def _columns(table: str) -> tuple[set[str], set[str]]:
    """(Resources, Non-Resource URLs) cells of `kubectl auth can-i --list`, one row per line."""
    resources, urls = set(), set()
    for line in table.splitlines()[1:]:
        cells = line.split()
        if line.startswith(" "):  # no resource: the first cell is the URL list
            urls.add(cells[0].strip("[]"))
        else:
            resources.add(cells[0])
    return resources, urls


def test_can_i_list_as_an_account_lists_exactly_its_bindings(haru: Cluster) -> None:
    haru.kubectl("create", "namespace", "lister")
    haru.kubectl("create", "role", "jobs", "--verb=get,create", "--resource=jobs.batch,pods/log", "-n", "lister")
    haru.kubectl("create", "role", "one-map", "--verb=get", "--resource=configmaps", "--resource-name=only",
                 "-n", "lister")
    for role in ("jobs", "one-map"):
        haru.kubectl("create", "rolebinding", role, f"--role={role}", "--serviceaccount=lister:robot", "-n", "lister")
    out = haru.kubectl("auth", "can-i", "--list", "--as=system:serviceaccount:lister:robot", "-n", "lister").stdout
    assert "configmaps   " in out and "[only]" in out and "[get]" in out
    resources, urls = _columns(out)
    assert resources == {"jobs.batch", "pods/log", "configmaps",
                         "selfsubjectreviews.authentication.k8s.io", "selfsubjectaccessreviews.authorization.k8s.io",
                         "selfsubjectrulesreviews.authorization.k8s.io"}
    assert urls == {"/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz",
                    "/version", "/version/", "/.well-known/openid-configuration",
                    "/.well-known/openid-configuration/", "/openid/v1/jwks", "/openid/v1/jwks/"}
    # Elsewhere the account holds only what every authenticated user does.
    resources, _ = _columns(haru.kubectl("auth", "can-i", "--list", "--as=system:serviceaccount:lister:robot",
                                         "-n", "default").stdout)
    assert "jobs.batch" not in resources and "configmaps" not in resources
    # The admin (kubeadm:cluster-admins, bound to cluster-admin as kubeadm binds it): everything.
    assert "*.*" in haru.kubectl("auth", "can-i", "--list").stdout


def test_impersonation_is_the_admins_not_the_viewers(haru: Cluster, viewer_kubeconfig: str) -> None:
    assert haru.kubectl("auth", "can-i", "get", "configmaps", "-n", "tenant-a",
                        "--as=system:serviceaccount:tenant-a:reader").stdout.strip() == "yes"
    refused = haru.kubectl("get", "pods", "-n", "tenant-a", "--as=jane", env=_viewer(viewer_kubeconfig), check=False)
    # ConstrainedImpersonation is on: the first refusal is the user-info mode's impersonate-on check.
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): pods is forbidden: User "system:serviceaccount:tenant-a:reader" '
        'cannot impersonate-on:user-info:list resource "pods" in API group "" in the namespace "tenant-a"')


def test_the_python_clients_access_reviews(haru: Cluster, viewer: str) -> None:
    configuration = pyclient.Configuration()
    pyconfig.load_kube_config(config_file=haru.kubeconfig, client_configuration=configuration)
    authz = pyclient.AuthorizationV1Api(pyclient.ApiClient(configuration))
    review = pyclient.V1SubjectAccessReview(spec=pyclient.V1SubjectAccessReviewSpec(
        user="system:serviceaccount:tenant-a:reader",
        groups=["system:serviceaccounts", "system:serviceaccounts:tenant-a", "system:authenticated"],
        resource_attributes=pyclient.V1ResourceAttributes(namespace="tenant-a", verb="list", resource="configmaps")))
    answer = authz.create_subject_access_review(review)
    assert answer.status.allowed is True
    assert answer.status.reason == ('RBAC: allowed by RoleBinding "reader-view/tenant-a" of ClusterRole "view" to '
                                    'ServiceAccount "reader/tenant-a"')
    review.spec.resource_attributes.namespace = "tenant-b"
    assert authz.create_subject_access_review(review).status.allowed is False
    # The viewer asks about itself.
    _token_only(configuration, viewer)
    own = pyclient.AuthorizationV1Api(pyclient.ApiClient(configuration))
    rules = own.create_self_subject_rules_review(pyclient.V1SelfSubjectRulesReview(
        spec=pyclient.V1SelfSubjectRulesReviewSpec(namespace="tenant-b"))).status
    assert rules.incomplete is False
    assert not any("configmaps" in (r.resources or []) for r in rules.resource_rules)
    with pytest.raises(ApiException) as refused:  # a SubjectAccessReview about others needs create on it
        own.create_subject_access_review(review)
    assert refused.value.status == 403
