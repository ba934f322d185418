"""Which Node labels a kubelet may set itself: kubelet's own list (kubeletapis.IsKubeletLabel).

Upstream's kubelet refuses --node-labels in the kubernetes.io and k8s.io namespaces other than
these, and NodeRestriction refuses them from a kubelet's credentials; node-restriction.kubernetes.io/
ones are for admins alone. `split()` parts a shape's labels into the kubelet's and the rest, which
the nodes host sets with its own client. Used by `kubelet.Kubelet._register`.
"""

from __future__ import annotations

KUBELET_LABELS = frozenset({
    "kubernetes.io/hostname", "kubernetes.io/os", "kubernetes.io/arch", "beta.kubernetes.io/os",
    "beta.kubernetes.io/arch", "beta.kubernetes.io/instance-type", "node.kubernetes.io/instance-type",
    "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone", "topology.kubernetes.io/region"})
KUBELET_NAMESPACES = ("kubelet.kubernetes.io", "node.kubernetes.io")
RESERVED = ("kubernetes.io", "k8s.io")


def _under(namespace: str, domain: str) -> bool:
    return namespace == domain or namespace.endswith("." + domain)


def kubelet_may_set(label: str) -> bool:
    namespace = label.split("/", 1)[0] if "/" in label else ""
    if _under(namespace, "node-restriction.kubernetes.io"):
        return False
    if not any(_under(namespace, d) for d in RESERVED):
        return True
    return label in KUBELET_LABELS or any(_under(namespace, n) for n in KUBELET_NAMESPACES)


def split(labels: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(the labels the kubelet sets, the ones the host sets for it)."""
    own = {k: v for k, v in labels.items() if kubelet_may_set(k)}
    return own, {k: v for k, v in labels.items() if k not in own}
