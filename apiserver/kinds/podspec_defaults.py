"""Defaults of a PodSpec and its containers, as the 1.36 core/v1 defaulters set them.

`pod_spec()` is SetDefaults_PodSpec plus the nested defaulters (containers, probes, volumes,
ports) and applies wherever a PodSpec appears: pods and every workload's pod template.
`pod_only()` is SetDefaults_Pod, which upstream applies to Pod objects alone. Callers: `pod.py`
and `pod_template.py`; admission-style pod defaults (service account, tolerations, priority)
live in `pod_admission.py`.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")
_VOLUME_MODE_DEFAULTS = ("secret", "configMap", "downwardAPI", "projected")
_NAME_ONLY = frozenset({"name"})  # a volume with nothing but a name becomes an emptyDir


def image_tag(image: str) -> str:
    """The tag kubelet's ParseImageName finds: "latest" when neither tag nor digest is given."""
    if not image or image != image.strip():
        return ""  # not a reference it parses: the error is ignored, so there is no tag
    name, _, digest = image.partition("@")
    repository, tag = name, ""
    if ":" in name.rsplit("/", 1)[-1]:
        repository, tag = name.rsplit(":", 1)
    if repository != repository.lower():
        return ""  # docker references reject upper-case repositories
    if not tag and not digest:
        return "latest"
    return tag


def container(c: Obj) -> None:
    if not c.get("imagePullPolicy"):
        c["imagePullPolicy"] = "Always" if image_tag(c.get("image") or "") == "latest" else "IfNotPresent"
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    c.setdefault("resources", {})
    for port in c.get("ports") or []:
        port.setdefault("protocol", "TCP")
    for probe_name in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = c.get(probe_name)
        if isinstance(probe, dict):
            _probe(probe)
    lifecycle = c.get("lifecycle") or {}
    for hook in ("postStart", "preStop"):
        if isinstance(lifecycle.get(hook), dict):
            _handler(lifecycle[hook])
    for env in c.get("env") or []:
        _field_ref((env.get("valueFrom") or {}).get("fieldRef"))


def _probe(probe: Obj) -> None:
    probe.setdefault("timeoutSeconds", 1)
    probe.setdefault("periodSeconds", 10)
    probe.setdefault("successThreshold", 1)
    probe.setdefault("failureThreshold", 3)
    _handler(probe)


def _handler(handler: Obj) -> None:
    http_get = handler.get("httpGet")
    if isinstance(http_get, dict):
        http_get.setdefault("path", "/")
        http_get.setdefault("scheme", "HTTP")


def _field_ref(ref: Any) -> None:
    if isinstance(ref, dict):
        ref.setdefault("apiVersion", "v1")


def volume(v: Obj) -> None:
    if v.keys() <= _NAME_ONLY:
        v["emptyDir"] = {}
    for kind in _VOLUME_MODE_DEFAULTS:
        source = v.get(kind)
        if isinstance(source, dict):
            source.setdefault("defaultMode", 420)
    host_path = v.get("hostPath")
    if isinstance(host_path, dict):
        host_path.setdefault("type", "")
    downward = v.get("downwardAPI")
    if downward:
        for item in downward.get("items") or []:
            _field_ref(item.get("fieldRef"))
    projected = v.get("projected")
    if projected:
        for source in projected.get("sources") or []:
            token = source.get("serviceAccountToken")
            if isinstance(token, dict):
                token.setdefault("expirationSeconds", 3600)
            for item in (source.get("downwardAPI") or {}).get("items") or []:
                _field_ref(item.get("fieldRef"))
    ephemeral = v.get("ephemeral")
    if ephemeral:
        claim_spec = (ephemeral.get("volumeClaimTemplate") or {}).get("spec")
        if isinstance(claim_spec, dict):
            claim_spec.setdefault("volumeMode", "Filesystem")


def pod_spec(spec: Obj) -> None:
    """SetDefaults_PodSpec and the defaulters of everything nested in it."""
    if not spec.get("dnsPolicy"):
        spec["dnsPolicy"] = "ClusterFirst"
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = 30
    if not spec.get("schedulerName"):
        spec["schedulerName"] = "default-scheduler"
    for key in CONTAINER_LISTS:
        for c in spec.get(key) or []:
            if isinstance(c, dict):
                container(c)
    for v in spec.get("volumes") or []:
        if isinstance(v, dict):
            volume(v)


def pod_only(spec: Obj) -> None:
    """SetDefaults_Pod: what a Pod gets and a pod template does not."""
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or []:
            resources = c.get("resources") or {}
            limits = resources.get("limits")
            if limits:
                requests = resources.setdefault("requests", {})
                for name, quantity in limits.items():
                    requests.setdefault(name, quantity)
                c["resources"] = resources
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True
    if spec.get("hostNetwork"):
        for key in ("containers", "initContainers"):
            for c in spec.get(key) or []:
                for port in c.get("ports") or []:
                    if not port.get("hostPort"):
                        port["hostPort"] = port.get("containerPort")
