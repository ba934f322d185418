"""The ResourceSlice strategy (resource.k8s.io): where the pool's devices are, and when taints came.

On top of the immutable driver, pool name and node name (the `fixed_fields.py` row), two rules of
upstream's validateResourceSliceSpec: exactly one of `nodeName`, `nodeSelector`, `allNodes` and
`perDeviceNodeSelection` is set (a false `allNodes` or `perDeviceNodeSelection` is refused), and a
slice holds `devices` or `sharedCounters`, not both. Create and update also stamp every device
taint that has no `timeAdded` (keeping the stored time of a taint that was already there), as
pkg/registry/resource/resourceslice/strategy.go does. `kinds/__init__.py` lists it.
"""

from __future__ import annotations

import time
from typing import Any

from apiserver import validation as v
from apiserver.kinds import fixed_fields
from apiserver.strategy import Causes, Obj

_BASE = fixed_fields.STRATEGIES[("resource.k8s.io", "resourceslices")]
_SELECTION = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"


def node_selection(spec: Obj) -> Causes:
    causes: Causes = []
    chosen = []
    if spec.get("nodeName"):
        chosen.append("`nodeName`")
    if spec.get("nodeSelector") is not None:
        chosen.append("`nodeSelector`")
    for key in ("allNodes", "perDeviceNodeSelection"):
        if spec.get(key) is True:
            chosen.append(f"`{key}`")
        elif spec.get(key) is False:
            causes.append(v.invalid(f"spec.{key}", False, "must be either unset or set to true"))
    if not chosen:
        causes.append(v.required("spec", _SELECTION))
    elif len(chosen) > 1:
        causes.append(v.invalid("spec", "{" + ", ".join(chosen) + "}", _SELECTION + ", but multiple fields are set"))
    if spec.get("sharedCounters") is not None and spec.get("devices") is not None:
        causes.append(v.invalid("spec", "", "only one of `sharedCounters` or `devices` is allowed"))
    return causes


def _taints(obj: Obj | None) -> dict[tuple[Any, ...], Any]:
    """(device, key, value, effect) → timeAdded of every taint in the slice."""
    found: dict[tuple[Any, ...], Any] = {}
    for device in ((obj or {}).get("spec") or {}).get("devices") or []:
        for taint in (device or {}).get("taints") or []:
            if isinstance(taint, dict):
                found[(device.get("name"), taint.get("key"), taint.get("value"), taint.get("effect"))] = \
                    taint.get("timeAdded")
    return found


def stamp_taints(obj: Obj, old: Obj | None) -> None:
    before = _taints(old)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for device in (obj.get("spec") or {}).get("devices") or []:
        for taint in (device or {}).get("taints") or []:
            if isinstance(taint, dict) and not taint.get("timeAdded"):
                key = (device.get("name"), taint.get("key"), taint.get("value"), taint.get("effect"))
                taint["timeAdded"] = before.get(key) or stamp


class ResourceSliceStrategy(_BASE):  # type: ignore[valid-type, misc]
    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        stamp_taints(obj, None)

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)
        stamp_taints(new, old)

    def validate(self, obj: Obj) -> Causes:
        spec = obj.get("spec")
        # A slice without a spec selects no node either: refused, as upstream's required spec is.
        return node_selection(spec if isinstance(spec, dict) else {}) + super().validate(obj)
