"""The RuntimeClass plugin: a pod's RuntimeClass must exist, and brings its overhead and scheduling.

Mutating (pod CREATE, no subresource): a named `runtimeClassName` that does not exist refuses
the pod (403 `pod rejected: RuntimeClass "x" not found`); its `overhead.podFixed` becomes the
pod's `spec.overhead` (a different overhead the pod sets itself is refused); its
`scheduling.nodeSelector` merges into the pod's (a conflicting key is refused) and its
`scheduling.tolerations` are added to the pod's. Validating (pod CREATE): the overhead a pod
carries must be its RuntimeClass's — one without a RuntimeClass that defines it is refused.
Upstream: plugin/pkg/admission/runtimeclass/admission.go.
"""

from __future__ import annotations

from typing import Any

from admission import errors
from admission.attributes import CREATE, Attributes
from admission.view import ClusterView

_GROUP, _RESOURCE = "node.k8s.io", "runtimeclasses"


class RuntimeClassPlugin:
    name = "RuntimeClass"

    def __init__(self, view: ClusterView):
        self.view = view

    def _applies(self, attrs: Attributes) -> bool:
        return (attrs.group, attrs.resource) == ("", "pods") and not attrs.subresource and \
            attrs.operation == CREATE and attrs.object is not None

    def _runtime_class(self, attrs: Attributes, spec: dict[str, Any]) -> dict[str, Any] | None:
        name = spec.get("runtimeClassName") or ""
        if not name:
            return None
        found = self.view.get(_GROUP, _RESOURCE, "", name)
        if found is None:
            raise errors.forbidden(attrs, f'pod rejected: RuntimeClass "{name}" not found')
        return found

    def admit(self, attrs: Attributes) -> None:
        if not self._applies(attrs):
            return
        spec = attrs.object.setdefault("spec", {})
        runtime_class = self._runtime_class(attrs, spec)
        if runtime_class is None:
            return
        fixed = (runtime_class.get("overhead") or {}).get("podFixed")
        if fixed:
            if spec.get("overhead") and spec["overhead"] != fixed:
                raise errors.forbidden(attrs, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined "
                                              "Overhead")
            spec["overhead"] = dict(fixed)
        scheduling = runtime_class.get("scheduling") or {}
        selector = dict(spec.get("nodeSelector") or {})
        for key, value in (scheduling.get("nodeSelector") or {}).items():
            if key in selector and selector[key] != value:
                raise errors.forbidden(attrs, f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = {value}; "
                                              f"pod.spec.nodeSelector[{key}] = {selector[key]}")
            selector[key] = value
        if selector:
            spec["nodeSelector"] = selector
        tolerations = list(spec.get("tolerations") or [])
        for toleration in scheduling.get("tolerations") or []:
            if toleration not in tolerations:
                tolerations.append(toleration)
        if tolerations:
            spec["tolerations"] = tolerations

    def validate(self, attrs: Attributes) -> None:
        if not self._applies(attrs):
            return
        spec = attrs.object.get("spec") or {}
        overhead = spec.get("overhead")
        if not overhead:
            return
        runtime_class = self._runtime_class(attrs, spec)
        fixed = ((runtime_class or {}).get("overhead") or {}).get("podFixed")
        if not fixed:
            raise errors.forbidden(attrs, "pod rejected: Pod Overhead set without corresponding RuntimeClass defined "
                                          "Overhead")
        if overhead != fixed:
            raise errors.forbidden(attrs, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
