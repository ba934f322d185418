"""pods/ephemeralcontainers and pods/resize: each may change one part of a pod and nothing else.

ephemeralcontainers: only spec.ephemeralContainers is taken from the request; existing ones may
be neither removed nor changed (ValidatePodEphemeralContainersUpdate). resize: only each
container's resources and resizePolicy are taken; only cpu and memory may change, requests and
limits may not be removed, memory limits not lowered without RestartContainer
(ValidatePodResize). Both bump generation. Built by `PodStrategy.*_strategy()`.
"""

from __future__ import annotations

import copy
from typing import Any

from apiserver import errors, validation as v
from apiserver.kinds import pod_qos, pod_validation, spec_diff
from apiserver.kinds.defaulting import DefaultingStrategy
from apiserver.strategy import Causes, Obj

_CPU_MEMORY = ("cpu", "memory")


class _PodPartStrategy(DefaultingStrategy):
    counts_generation = True

    def __init__(self, main: DefaultingStrategy) -> None:
        super().__init__(namespaced=True, has_status=True, name_rule=main.name_rule)
        self.main = main

    def prepare_for_create(self, obj: Obj) -> None:  # pragma: no cover - subresources are never created
        raise errors.method_not_allowed()

    def default(self, obj: Obj) -> None:
        self.main.default(obj)

    def _take(self, new: Obj, old: Obj, spec: Obj) -> None:
        """Replace `new` with the old pod carrying `spec`; keep the request's resourceVersion precondition."""
        version = (new.get("metadata") or {}).get("resourceVersion")
        new.clear()
        new.update(copy.deepcopy(old))
        new["spec"] = spec
        if version:
            new["metadata"]["resourceVersion"] = version
        self.default(new)
        generation = old["metadata"].get("generation", 1)
        new["metadata"]["generation"] = generation + 1 if new["spec"] != old.get("spec") else generation

    def _common(self, new: Obj, old: Obj) -> Causes:
        causes = v.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        return causes + pod_validation.metadata_and_spec(
            new, self.name_rule, userns_host_network=pod_validation.userns_with_host_network(old))


class EphemeralContainersStrategy(_PodPartStrategy):
    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        spec = copy.deepcopy(old.get("spec") or {})
        requested = (new.get("spec") or {}).get("ephemeralContainers")
        if requested:
            spec["ephemeralContainers"] = requested
        else:
            spec.pop("ephemeralContainers", None)
        self._take(new, old, spec)

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        causes = self._common(new, old) + pod_validation.mirror_annotation_update(new, old)
        if pod_validation.MIRROR_ANNOTATION in ((old.get("metadata") or {}).get("annotations") or {}):
            return [v.forbidden("", "static pods do not support ephemeral containers")]
        by_name = {c.get("name"): c for c in (new.get("spec") or {}).get("ephemeralContainers") or []}
        for existing in (old.get("spec") or {}).get("ephemeralContainers") or []:
            name = existing.get("name")
            if name not in by_name:
                causes.append(v.forbidden("spec.ephemeralContainers", f'existing ephemeral containers "{name}" may not be removed\n'))
            elif by_name[name] != existing:
                changes = spec_diff.diff(existing, by_name[name])
                causes.append(v.forbidden("spec.ephemeralContainers",
                                          f'existing ephemeral containers "{name}" may not be changed\n{changes}'))
        return causes


def _same_containers(new: list[Obj], old: list[Obj]) -> bool:
    return len(new) == len(old) and all(a.get("name") == b.get("name") for a, b in zip(new, old))


def _with_old_cpu_memory(c: Obj, old_c: Obj) -> Obj:
    """The container with its cpu/memory requests and limits put back to the old values."""
    munged = copy.deepcopy(c)
    resources: dict[str, Any] = {}
    for kind in ("limits", "requests"):
        old_values = (old_c.get("resources") or {}).get(kind)
        if old_values is None:
            continue
        values = {k: q for k, q in ((c.get("resources") or {}).get(kind) or {}).items() if k not in _CPU_MEMORY}
        values.update({k: old_values[k] for k in _CPU_MEMORY if k in old_values})
        resources[kind] = values
    munged["resources"] = resources
    return munged


def _container_resize(new_r: Obj, old_r: Obj, policies: list[Obj], path: str) -> Causes:
    causes: Causes = []
    for kind, noun in (("requests", "requests"), ("limits", "limits")):
        if set((old_r.get(kind) or {})) - set(new_r.get(kind) or {}):
            causes.append(v.forbidden(f"{path}.{kind}", f"resource {noun} cannot be removed"))
    memory_policy = next((p.get("restartPolicy") for p in policies if p.get("resourceName") == "memory"), "")
    if memory_policy in ("", "NotRequired"):
        new_limit = v.parse_quantity((new_r.get("limits") or {}).get("memory"))
        old_limit = v.parse_quantity((old_r.get("limits") or {}).get("memory"))
        if new_limit is not None and old_limit is not None and new_limit < old_limit:
            causes.append(v.forbidden(f"{path}.limits[memory]", "memory limits cannot be decreased unless resizePolicy is RestartContainer"))
        elif new_limit is not None and old_limit is None:
            causes.append(v.forbidden(f"{path}.limits[memory]", "memory limits cannot be added unless resizePolicy is RestartContainer"))
    return causes


class ResizeStrategy(_PodPartStrategy):
    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        requested, old_spec = new.get("spec") or {}, old.get("spec") or {}
        spec = copy.deepcopy(old_spec)
        if all(_same_containers(requested.get(k) or [], old_spec.get(k) or []) for k in ("containers", "initContainers")):
            for key in ("containers", "initContainers"):
                for c, asked in zip(spec.get(key) or [], requested.get(key) or []):
                    for part in ("resources", "resizePolicy"):
                        c.pop(part, None)
                        if part in asked:
                            c[part] = copy.deepcopy(asked[part])
        else:
            spec = requested  # validation reports the reorder, rename, addition or removal
        self._take(new, old, spec)

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        causes = self._common(new, old)
        spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        if any((s.get("resources") or {}).get("requests") or (s.get("resources") or {}).get("limits") for s in (spec, old_spec)):
            return [v.forbidden("", "pods with pod-level resources cannot be resized")]
        if pod_validation.MIRROR_ANNOTATION in ((old.get("metadata") or {}).get("annotations") or {}):
            return [v.forbidden("", "static pods cannot be resized")]
        if (old_spec.get("os") or {}).get("name") == "windows":
            return [v.forbidden("", "windows pods cannot be resized")]
        old_qos = (old.get("status") or {}).get("qosClass") or pod_qos.compute(old_spec)
        if old_qos != pod_qos.compute(spec):
            causes.append(v.invalid("spec", (new.get("status") or {}).get("qosClass", ""), "Pod QOS Class may not change as a result of resizing"))
        for status in (old.get("status") or {}).get("containerStatuses") or []:
            if (status.get("state") or {}).get("running") is not None:
                if status.get("resources") is None:
                    causes.append(v.forbidden("spec", "Pod running on node without support for resize"))
                break
        if not all(_same_containers(spec.get(k) or [], old_spec.get(k) or []) for k in ("containers", "initContainers")):
            return causes + [v.forbidden("spec", "only cpu and memory resources are mutable")]
        munged = copy.deepcopy(spec)
        for key in ("initContainers", "containers"):
            for ix, (c, old_c) in enumerate(zip(spec.get(key) or [], old_spec.get(key) or [])):
                sidecar = key == "initContainers" and old_c.get("restartPolicy") == "Always"
                if key == "containers" or sidecar:
                    causes += _container_resize(c.get("resources") or {}, old_c.get("resources") or {},
                                                c.get("resizePolicy") or [], f"spec.{key}[{ix}].resources")
                    munged[key][ix] = _with_old_cpu_memory(c, old_c)
                    if munged[key][ix] != old_c:
                        causes.append(v.forbidden("spec", "only cpu and memory resources for sidecar containers are mutable"
                                                  if sidecar else "only cpu and memory resources are mutable"))
                elif c != old_c:
                    causes.append(v.forbidden("spec", "resources for non-sidecar init containers are immutable"))
        if not causes and munged != old_spec:
            causes.append(v.forbidden("spec", "only cpu and memory resources are mutable"))
        return causes
