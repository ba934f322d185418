"""Which nodes a DaemonSet wants, and the pod it makes for one: the pure half of `daemon_set.py`.

Upstream's NodeShouldRunDaemonPod: `should_run(template, node)` says whether a new pod belongs
there (nodeName, nodeSelector, required node affinity, NoSchedule/NoExecute taints against the
pod's tolerations plus the daemon tolerations) and whether an existing one may stay (only
NoExecute taints evict). `new_pod` is the template with the daemon tolerations added
(AddOrUpdateDaemonPodTolerations) and the node pinned by a `matchFields metadata.name` term
(ReplaceDaemonSetPodNodeNameNodeAffinity), for the scheduler to bind. `target_node` reads it back.
"""

from __future__ import annotations

import copy
from typing import Any

from controllers import controller_refs

Obj = dict[str, Any]
REVISION_LABEL = "controller-revision-hash"
GENERATION_LABEL = "pod-template-generation"
GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"
NAME_FIELD = "metadata.name"

# What every daemon pod tolerates, so node conditions do not keep it off (or evict it from) its node.
DAEMON_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]
# Only host-network pods can run before the node's network is up.
HOST_NETWORK_TOLERATION = {"key": "node.kubernetes.io/network-unavailable", "operator": "Exists", "effect": "NoSchedule"}


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def daemon_tolerations(spec: Obj) -> list[Obj]:
    """The pod's tolerations with the daemon ones added (a same key and effect is replaced, as upstream)."""
    extra = DAEMON_TOLERATIONS + ([HOST_NETWORK_TOLERATION] if spec.get("hostNetwork") else [])
    wanted = {(t["key"], t["effect"]) for t in extra}
    kept = [t for t in spec.get("tolerations") or [] if (t.get("key"), t.get("effect")) not in wanted]
    return kept + [dict(t) for t in extra]


def tolerates(toleration: Obj, taint: Obj) -> bool:
    """core/v1 Toleration.ToleratesTaint."""
    if toleration.get("effect") and toleration.get("effect") != taint.get("effect"):
        return False
    if toleration.get("key") and toleration.get("key") != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


def _requirement_holds(requirement: Obj, value: str | None) -> bool:
    operator, values = requirement.get("operator"), requirement.get("values") or []
    if operator == "In":
        return value is not None and value in values
    if operator == "NotIn":
        return value is None or value not in values
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    if operator in ("Gt", "Lt"):
        try:
            have, want = int(value or ""), int(values[0])
        except (ValueError, IndexError):
            return False
        return have > want if operator == "Gt" else have < want
    return False


def _term_matches(term: Obj, node: Obj) -> bool:
    labels = _meta(node).get("labels") or {}
    expressions, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
    if not expressions and not fields:
        return False  # an empty term matches nothing
    return all(_requirement_holds(e, labels.get(e.get("key"))) for e in expressions) and \
        all(f.get("key") == NAME_FIELD and _requirement_holds(f, _meta(node).get("name")) for f in fields)


def fits_affinity(spec: Obj, node: Obj) -> bool:
    labels = _meta(node).get("labels") or {}
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution"))
    if required is None:
        return True
    return any(_term_matches(t, node) for t in required.get("nodeSelectorTerms") or [])


def should_run(template: Obj, node: Obj) -> tuple[bool, bool]:
    """(a new daemon pod belongs on `node`, an existing one may keep running there)."""
    spec = (template or {}).get("spec") or {}
    if spec.get("nodeName") and spec["nodeName"] != _meta(node).get("name"):
        return False, False
    if not fits_affinity(spec, node):
        return False, False
    tolerations = daemon_tolerations(spec)
    untolerated = [t for t in (node.get("spec") or {}).get("taints") or []
                   if t.get("effect") in ("NoSchedule", "NoExecute") and not any(tolerates(tol, t) for tol in tolerations)]
    if not untolerated:
        return True, True
    return False, not any(t.get("effect") == "NoExecute" for t in untolerated)


def pin_to_node(affinity: Obj | None, node_name: str) -> Obj:
    """The affinity with every required term's matchFields replaced by `metadata.name In [node]`."""
    out = copy.deepcopy(affinity or {})
    node_affinity = out.setdefault("nodeAffinity", {})
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    field = [{"key": NAME_FIELD, "operator": "In", "values": [node_name]}]
    terms = required.get("nodeSelectorTerms") or []
    if not terms:
        terms = [{"matchFields": field}]
    else:
        terms = [{**t, "matchFields": copy.deepcopy(field)} for t in terms]
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
    return out


def target_node(pod: Obj) -> str | None:
    """Where a daemon pod is meant to run: its nodeName, or the node its matchFields term names."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")) or {}
    for term in required.get("nodeSelectorTerms") or []:
        for field in term.get("matchFields") or []:
            if field.get("key") == NAME_FIELD and field.get("operator") == "In" and len(field.get("values") or []) == 1:
                return str(field["values"][0])
    return None


def new_pod(ds: Obj, node_name: str, hash_: str) -> Obj:
    template = (ds.get("spec") or {}).get("template") or {}
    tmeta = template.get("metadata") or {}
    labels = dict(tmeta.get("labels") or {})
    labels[REVISION_LABEL] = hash_
    generation = (_meta(ds).get("annotations") or {}).get(GENERATION_ANNOTATION)
    if generation:
        labels[GENERATION_LABEL] = generation
    meta: Obj = {"generateName": f"{_meta(ds)['name']}-", "labels": labels,
                 "ownerReferences": [controller_refs.owner_reference(ds, "apps/v1", "DaemonSet")]}
    for key in ("annotations", "finalizers"):
        if tmeta.get(key):
            meta[key] = copy.deepcopy(tmeta[key])
    spec = copy.deepcopy(template.get("spec") or {})
    spec["tolerations"] = daemon_tolerations(spec)
    spec["affinity"] = pin_to_node(spec.get("affinity"), node_name)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def is_updated(pod: Obj, hash_: str, generation: str | None) -> bool:
    """IsPodUpdated: the pod has the current revision's hash, or the current template generation."""
    labels = _meta(pod).get("labels") or {}
    return bool(hash_) and labels.get(REVISION_LABEL) == hash_ or generation is not None and labels.get(GENERATION_LABEL) == generation
