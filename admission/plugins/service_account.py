"""The ServiceAccount plugin: a pod runs as an account that exists and gets its API credentials.

Mutating and validating, pods only, CREATE only, no subresources (upstream:
plugin/pkg/admission/serviceaccount/admission.go). Mirror pods are left alone by `admit` and
may not name an account (`validate`). Other pods: serviceAccountName defaults to "default"; the
account must exist (403 `error looking up service account ns/sa: serviceaccount "sa" not found`,
marked `retry` for "default", which the controllers create a moment after the namespace: the
create handler looks again, as upstream's live lookups do); unless the pod or else the account
sets automountServiceAccountToken false, the projected volume `kube-api-access-<5>` (a 3607 s
token, kube-root-ca.crt's ca.crt, the namespace) is added and mounted read-only at
/var/run/secrets/kubernetes.io/serviceaccount in every container and init container that has no
mount there; the account's imagePullSecrets fill a pod that lists none.
"""

from __future__ import annotations

import secrets
from typing import Any

from admission import errors
from admission.attributes import CREATE, Attributes
from admission.view import ClusterView

DEFAULT_ACCOUNT = "default"
MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
VOLUME_PREFIX = "kube-api-access-"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
# Upstream's WarnOnlyBoundTokenExpirationSeconds: an hour and 7 s, which kubelets recognise.
TOKEN_EXPIRATION_SECONDS = 3607
ROOT_CA_CONFIGMAP = "kube-root-ca.crt"
# apimachinery's rand.String alphabet: no vowels, no look-alikes.
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def volume_name() -> str:
    return VOLUME_PREFIX + "".join(secrets.choice(_ALPHABET) for _ in range(5))


def token_volume(name: str) -> dict[str, Any]:
    return {"name": name, "projected": {
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS, "path": "token"}},
            {"configMap": {"name": ROOT_CA_CONFIGMAP, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace",
                                        "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
        ],
        "defaultMode": 0o644,
    }}


def _automount(pod_spec: dict[str, Any], account: dict[str, Any]) -> bool:
    if pod_spec.get("automountServiceAccountToken") is not None:
        return bool(pod_spec["automountServiceAccountToken"])
    if account.get("automountServiceAccountToken") is not None:
        return bool(account["automountServiceAccountToken"])
    return True


def mount_token(spec: dict[str, Any]) -> None:
    """The token volume (an existing kube-api-access-* one is reused) and its mounts."""
    volumes = spec.get("volumes") or []
    name = next((v["name"] for v in volumes if str(v.get("name", "")).startswith(VOLUME_PREFIX)), None)
    has_volume = name is not None
    if name is None:
        taken = {v.get("name") for v in volumes}
        name = volume_name()
        while name in taken:
            name = volume_name()
    mounted = False
    for field in ("initContainers", "containers"):
        for container in spec.get(field) or []:
            mounts = container.get("volumeMounts") or []
            if any(m.get("mountPath") == MOUNT_PATH for m in mounts):
                continue  # the pod's own mount there wins
            container["volumeMounts"] = [*mounts, {"name": name, "readOnly": True, "mountPath": MOUNT_PATH}]
            mounted = True
    if mounted and not has_volume:
        spec["volumes"] = [*volumes, token_volume(name)]


def _is_pod_create(attrs: Attributes) -> bool:
    return (not attrs.subresource and (attrs.group, attrs.resource) == ("", "pods")
            and attrs.operation == CREATE and attrs.object is not None)


def _mirror(pod: dict[str, Any]) -> bool:
    return MIRROR_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {})


class ServiceAccountPlugin:
    name = "ServiceAccount"

    def __init__(self, view: ClusterView):
        self.view = view

    def admit(self, attrs: Attributes) -> None:
        if not _is_pod_create(attrs):
            return
        pod = attrs.object
        assert pod is not None
        if _mirror(pod):
            return
        spec = pod.setdefault("spec", {})
        name = spec.get("serviceAccountName") or spec.get("serviceAccount") or DEFAULT_ACCOUNT
        spec["serviceAccountName"] = spec["serviceAccount"] = name
        account = self.view.get("", "serviceaccounts", attrs.namespace, name)
        if account is None:
            refusal = errors.forbidden(attrs, f"error looking up service account {attrs.namespace}/{name}: "
                                              f'serviceaccount "{name}" not found')
            refusal.retry = name == DEFAULT_ACCOUNT
            raise refusal
        if _automount(spec, account):
            mount_token(spec)
        if not spec.get("imagePullSecrets") and account.get("imagePullSecrets"):
            spec["imagePullSecrets"] = [dict(s) for s in account["imagePullSecrets"]]

    def validate(self, attrs: Attributes) -> None:
        if not _is_pod_create(attrs) or not _mirror(attrs.object or {}):
            return
        spec = (attrs.object or {}).get("spec") or {}
        if spec.get("serviceAccountName"):
            raise errors.forbidden(attrs, "a mirror pod may not reference service accounts")
        for volume in spec.get("volumes") or []:
            if volume.get("secret") is not None:
                raise errors.forbidden(attrs, "a mirror pod may not reference secrets")
