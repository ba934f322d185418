"""The Priority plugin: pods get the priority (and preemptionPolicy) of their PriorityClass.

Mutating, pods (and, gated, PodGroups and Workloads), no subresources. Pod CREATE: a named class must exist (403 "no PriorityClass
with name x was found"); without a name the global default class applies (the lowest value if
several claim it) and its name is written into the pod, else priority 0. A priority or
preemptionPolicy the pod sets itself must equal the computed one (403 with upstream's text).
UPDATE keeps the old priority when the new pod leaves it out. PodGroups (scheduling.k8s.io/v1alpha2,
KEP-5710), only while `WorkloadAwarePreemption` is on: on CREATE, `spec.priorityClassName` resolves
to `spec.priority` by the same rules (403 for a missing class, the global default when unset, 0
without one), and so does each of a new Workload's `podGroupTemplates`; UPDATE is left alone,
the fields are immutable. Validating, priorityclasses: only one class may be the global default. The two system classes are seeded by the API server
(`SYSTEM_CLASSES`). Upstream: plugin/pkg/admission/priority/admission.go.
"""

from __future__ import annotations

from typing import Any

import msgspec

from admission import errors
from admission.attributes import CREATE, UPDATE, Attributes
from admission.view import ClusterView

SYSTEM_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
_GROUP, _RESOURCE = "scheduling.k8s.io", "priorityclasses"
_POD_GROUPS = (_GROUP, "podgroups")
_WORKLOADS = (_GROUP, "workloads")


def system_class(name: str) -> dict[str, Any]:
    """One of the two classes every cluster has, as the API server seeds it."""
    return {
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": SYSTEM_CLASSES[name], "preemptionPolicy": "PreemptLowerPriority",
        "description": "Used for system critical pods that must run in the cluster, but can be moved to another "
                       "node if necessary." if name == "system-cluster-critical" else
                       "Used for system critical pods that must not be moved from their current node.",
    }


class PriorityPlugin:
    name = "Priority"

    def __init__(self, view: ClusterView, *, pod_groups: bool = False):
        self.view = view
        self.pod_groups = pod_groups  # WorkloadAwarePreemption: PodGroups get a priority too
        self._decoded: dict[str, tuple[int, dict[str, Any]]] = {}  # name → (revision, class)
        self._default_memo: tuple[int, dict[str, Any] | None] = (-1, None)  # (store revision, default)

    def _default_class(self) -> dict[str, Any] | None:
        revision = self.view.revision()
        if self._default_memo[0] != revision:
            self._default_memo = (revision, self._find_default())
        return self._default_memo[1]

    def _find_default(self) -> dict[str, Any] | None:
        chosen = None
        for stored in self.view.objects(_GROUP, _RESOURCE):
            cached = self._decoded.get(stored.name)
            if cached is None or cached[0] != stored.revision:
                cached = (stored.revision, msgspec.json.decode(stored.value))
                self._decoded[stored.name] = cached
            pc = cached[1]
            if pc.get("globalDefault") and (chosen is None or pc.get("value", 0) < chosen.get("value", 0)):
                chosen = pc
        return chosen

    def admit(self, attrs: Attributes) -> None:
        if attrs.subresource or attrs.object is None:
            return
        if (attrs.group, attrs.resource) == _POD_GROUPS:
            if self.pod_groups and attrs.operation == CREATE:
                self._admit_pod_group(attrs)
            return
        if (attrs.group, attrs.resource) == _WORKLOADS:
            if self.pod_groups and attrs.operation == CREATE:
                self._admit_workload(attrs)
            return
        if (attrs.group, attrs.resource) != ("", "pods"):
            return
        spec = attrs.object.setdefault("spec", {})
        if attrs.operation == UPDATE:
            old_priority = ((attrs.old_object or {}).get("spec") or {}).get("priority")
            if spec.get("priority") is None and old_priority is not None:
                spec["priority"] = old_priority
            return
        if attrs.operation != CREATE:
            return
        class_name = spec.get("priorityClassName") or ""
        policy: str | None
        if not class_name:
            default = self._default_class()
            if default is None:
                priority, policy = 0, "PreemptLowerPriority"
            else:
                priority, policy = default.get("value", 0), default.get("preemptionPolicy")
                spec["priorityClassName"] = default["metadata"]["name"]
        else:
            found = self.view.get(_GROUP, _RESOURCE, "", class_name)
            if found is None:
                raise errors.forbidden(attrs, f"no PriorityClass with name {class_name} was found")
            priority, policy = found.get("value", 0), found.get("preemptionPolicy")
        given = spec.get("priority")
        if given is not None and given != priority:
            raise errors.forbidden(attrs, f"the integer value of priority ({given}) must not be provided in pod spec; "
                                          f"priority admission controller computed {priority} from the given "
                                          "PriorityClass name")
        spec["priority"] = priority
        if policy is not None:
            given_policy = spec.get("preemptionPolicy")
            if given_policy is not None and given_policy != policy:
                raise errors.forbidden(attrs, f"the string value of PreemptionPolicy ({given_policy}) must not be "
                                              f"provided in pod spec; priority admission controller computed "
                                              f"{policy} from the given PriorityClass name")
            spec["preemptionPolicy"] = policy

    def _admit_pod_group(self, attrs: Attributes) -> None:
        """A PodGroup's priority from its class, as a pod's (no preemptionPolicy: the group has none)."""
        assert attrs.object is not None
        self._resolve_group_priority(attrs, attrs.object.setdefault("spec", {}), "pod group spec", zero=True)

    def _admit_workload(self, attrs: Attributes) -> None:
        """Each pod group template of a new Workload resolved as a PodGroup is, so the groups a
        controller makes from it carry the same priority; without a class or a default one the
        template keeps no priority (its groups get 0 when they are made, the field's doc says)."""
        assert attrs.object is not None
        for template in (attrs.object.get("spec") or {}).get("podGroupTemplates") or []:
            if isinstance(template, dict):
                self._resolve_group_priority(attrs, template, "pod group template", zero=False)

    def _resolve_group_priority(self, attrs: Attributes, spec: dict[str, Any], where: str, *, zero: bool) -> None:
        class_name = spec.get("priorityClassName") or ""
        if not class_name:
            default = self._default_class()
            if default is None and not zero:
                return
            priority = 0 if default is None else default.get("value", 0)
            if default is not None:
                spec["priorityClassName"] = default["metadata"]["name"]
        else:
            found = self.view.get(_GROUP, _RESOURCE, "", class_name)
            if found is None:
                raise errors.forbidden(attrs, f"no PriorityClass with name {class_name} was found")
            priority = found.get("value", 0)
        given = spec.get("priority")
        if given is not None and given != priority:
            raise errors.forbidden(attrs, f"the integer value of priority ({given}) must not be provided in {where}; "
                                          f"priority admission controller computed {priority} from the given "
                                          "PriorityClass name")
        spec["priority"] = priority

    def validate(self, attrs: Attributes) -> None:
        if attrs.subresource or (attrs.group, attrs.resource) != (_GROUP, _RESOURCE):
            return
        if attrs.operation not in (CREATE, UPDATE) or not (attrs.object or {}).get("globalDefault"):
            return
        default = self._default_class()
        if default is None:
            return
        name = default["metadata"]["name"]
        if attrs.operation == CREATE or name != attrs.display_name():
            raise errors.forbidden(attrs, f"PriorityClass {name} is already marked as default. "
                                          "Only one default can exist")
