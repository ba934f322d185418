"""What a StatefulSet's pods and claims are called and look like: the pure half of `stateful_set.py`.

Upstream's stateful_set_utils: ordinals (`spec.ordinals.start` up to start+replicas), the pod
`<set>-<ordinal>` with the pod-name, pod-index and controller-revision-hash labels, hostname and
subdomain (serviceName), one volume per volumeClaimTemplate pointing at the claim
`<template>-<set>-<ordinal>`, the claims themselves with the retention policy's ownerReferences,
and which pods are condemned, to update, or to wait for (`plan`).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

from controllers import controller_refs, pod_states

Obj = dict[str, Any]
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_LABEL = "controller-revision-hash"
_ORDINAL = re.compile(r"^(.*)-([0-9]+)$")


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def replicas(sts: Obj) -> int:
    value = (sts.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def start_ordinal(sts: Obj) -> int:
    return int(((sts.get("spec") or {}).get("ordinals") or {}).get("start") or 0)


def ordinal_of(sts_name: str, pod_name: str) -> int | None:
    """The ordinal in `<set>-<ordinal>`, or None when the pod's name is not one of the set's."""
    match = _ORDINAL.match(pod_name)
    if match is None or match.group(1) != sts_name:
        return None
    return int(match.group(2))


def in_range(sts: Obj, ordinal: int) -> bool:
    start = start_ordinal(sts)
    return start <= ordinal < start + replicas(sts)


def pod_name(sts: Obj, ordinal: int) -> str:
    return f"{_meta(sts)['name']}-{ordinal}"


def claim_name(template_name: str, sts: Obj, ordinal: int) -> str:
    return f"{template_name}-{_meta(sts)['name']}-{ordinal}"


def claim_templates(sts: Obj) -> list[Obj]:
    return list((sts.get("spec") or {}).get("volumeClaimTemplates") or [])


def retention(sts: Obj) -> tuple[str, str]:
    policy = (sts.get("spec") or {}).get("persistentVolumeClaimRetentionPolicy") or {}
    return policy.get("whenDeleted") or "Retain", policy.get("whenScaled") or "Retain"


def new_pod(sts: Obj, template: Obj, revision_name: str, ordinal: int) -> Obj:
    """The pod for `ordinal` from `template` (the revision's), as newVersionedStatefulSetPod."""
    name = pod_name(sts, ordinal)
    tmeta = template.get("metadata") or {}
    labels = dict(tmeta.get("labels") or {})
    labels.update({POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal), REVISION_LABEL: revision_name})
    meta: Obj = {"name": name, "namespace": _meta(sts)["namespace"], "labels": labels,
                 "ownerReferences": [controller_refs.owner_reference(sts, "apps/v1", "StatefulSet")]}
    for key in ("annotations", "finalizers"):
        if tmeta.get(key):
            meta[key] = copy.deepcopy(tmeta[key])
    spec = copy.deepcopy(template.get("spec") or {})
    spec["hostname"] = name
    service = (sts.get("spec") or {}).get("serviceName")
    if service:
        spec["subdomain"] = service
    claims = {t["metadata"]["name"]: claim_name(t["metadata"]["name"], sts, ordinal) for t in claim_templates(sts)}
    if claims:
        volumes = [v for v in spec.get("volumes") or [] if v.get("name") not in claims]
        volumes += [{"name": tname, "persistentVolumeClaim": {"claimName": cname}} for tname, cname in claims.items()]
        spec["volumes"] = volumes
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def new_claims(sts: Obj, ordinal: int) -> list[Obj]:
    """The claims for `ordinal`: each template's, labelled with the set's matchLabels."""
    selector_labels = ((sts.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    claims = []
    for template in claim_templates(sts):
        tmeta = template.get("metadata") or {}
        labels = {**(tmeta.get("labels") or {}), **selector_labels}
        meta: Obj = {"name": claim_name(tmeta["name"], sts, ordinal), "namespace": _meta(sts)["namespace"],
                     "labels": labels}
        if tmeta.get("annotations"):
            meta["annotations"] = dict(tmeta["annotations"])
        claims.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
                       "spec": copy.deepcopy(template.get("spec") or {})})
    return claims


def claim_owner_refs(sts: Obj, claim: Obj, pod: Obj | None, ordinal: int) -> list[Obj]:
    """The ownerReferences the retention policy wants on a claim (others' refs kept), as
    updateClaimOwnerRefForSetAndPod: the pod's alone for a condemned ordinal under
    whenScaled=Delete, else the set's for whenDeleted=Delete."""
    when_deleted, when_scaled = retention(sts)
    set_uid, pod_uid = _meta(sts).get("uid"), _meta(pod).get("uid")
    keep = [r for r in _meta(claim).get("ownerReferences") or [] if r.get("uid") not in (set_uid, pod_uid)]
    # Refs to an earlier incarnation of the set or pod would keep the claim forever; upstream drops them too.
    keep = [r for r in keep if not (r.get("kind") == "StatefulSet" and r.get("name") == _meta(sts).get("name"))
            and not (r.get("kind") == "Pod" and r.get("name") == pod_name(sts, ordinal))]
    condemned = when_scaled == "Delete" and not in_range(sts, ordinal)
    if condemned:
        # The pod alone: with the set as a second owner the collector would only drop the pod's ref.
        if pod is not None and pod_uid:
            keep.append({"apiVersion": "v1", "kind": "Pod", "name": _meta(pod)["name"], "uid": pod_uid})
    elif when_deleted == "Delete":
        keep.append({"apiVersion": "apps/v1", "kind": "StatefulSet", "name": _meta(sts)["name"], "uid": set_uid,
                     "controller": True, "blockOwnerDeletion": True})
    return keep


def revision_of(pod: Obj) -> str:
    return (_meta(pod).get("labels") or {}).get(REVISION_LABEL) or ""


def is_healthy(pod: Obj, min_ready_seconds: int, now: float) -> bool:
    """Running, ready (for minReadySeconds) and not being deleted: what OrderedReady waits for."""
    return (pod.get("status") or {}).get("phase") == "Running" and pod_states.is_available(pod, min_ready_seconds, now) \
        and not _meta(pod).get("deletionTimestamp")


def is_failed(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Failed", "Succeeded") and not _meta(pod).get("deletionTimestamp")


@dataclass
class Plan:
    """One pass's actions, in the order they are to be done; `wait` says why the pass stops early."""
    create: list[int] = field(default_factory=list)      # ordinals to create (at their revision)
    delete: list[str] = field(default_factory=list)      # pod names: failed, condemned or to update
    wait: str = ""


def plan(sts: Obj, pods: dict[int, Obj], update_revision: str, now: float) -> Plan:
    """What upstream's updateStatefulSet does in one pass, given the set's pods by ordinal.

    Failed pods are deleted (to be recreated); missing ordinals in range are created; condemned
    pods (out of range) go highest first. OrderedReady stops at the first pod that is not
    healthy and deletes one condemned pod at a time; Parallel does all at once. RollingUpdate then
    deletes, highest ordinal first and only at or above the partition, pods not at the update
    revision while fewer than maxUnavailable (default 1) of the set's pods are unavailable."""
    spec = sts.get("spec") or {}
    ordered = (spec.get("podManagementPolicy") or "OrderedReady") == "OrderedReady"
    min_ready = int(spec.get("minReadySeconds") or 0)
    start, count = start_ordinal(sts), replicas(sts)
    out = Plan()
    wanted = range(start, start + count)
    for ordinal in wanted:
        pod = pods.get(ordinal)
        if pod is not None and is_failed(pod):
            out.delete.append(_meta(pod)["name"])
            if ordered:
                out.wait = f"pod {_meta(pod)['name']} failed"
                return out
            continue
        if pod is None:
            out.create.append(ordinal)
            if ordered:
                out.wait = f"creating pod {pod_name(sts, ordinal)}"
                return out
            continue
        if ordered and not is_healthy(pod, min_ready, now):
            out.wait = f"pod {_meta(pod)['name']} is not ready"
            return out
    condemned = sorted((o for o in pods if o not in wanted), reverse=True)
    # Upstream lets OrderedReady delete an unhealthy condemned pod only if it is the lowest unhealthy one.
    first_unhealthy = min((o for o in condemned if not is_healthy(pods[o], min_ready, now)), default=None)
    for ordinal in condemned:
        pod = pods[ordinal]
        if _meta(pod).get("deletionTimestamp"):
            if ordered:
                out.wait = f"pod {_meta(pod)['name']} is terminating"
                return out
            continue
        if ordered and not is_healthy(pod, min_ready, now) and ordinal != first_unhealthy:
            out.wait = f"pod {_meta(pod)['name']} is not ready; waiting for pod {pod_name(sts, first_unhealthy or 0)}"
            return out
        out.delete.append(_meta(pod)["name"])
        if ordered:
            return out
    if (spec.get("updateStrategy") or {}).get("type", "RollingUpdate") != "RollingUpdate":
        return out
    if out.create or out.delete:
        return out
    rolling = (spec.get("updateStrategy") or {}).get("rollingUpdate") or {}
    partition = int(rolling.get("partition") or 0)
    budget = max_unavailable(rolling.get("maxUnavailable"), count)
    unavailable = sum(1 for o in wanted if o not in pods or not is_healthy(pods[o], min_ready, now))
    if unavailable >= budget:
        out.wait = f"{unavailable} pods unavailable, maxUnavailable is {budget}"
        return out
    for ordinal in sorted((o for o in wanted if o - start >= partition), reverse=True):
        pod = pods.get(ordinal)
        if pod is not None and revision_of(pod) != update_revision and not _meta(pod).get("deletionTimestamp"):
            out.delete.append(_meta(pod)["name"])
            if len(out.delete) >= budget - unavailable:
                break
    return out


def max_unavailable(value: int | str | None, replicas_: int) -> int:
    """rollingUpdate.maxUnavailable (MaxUnavailableStatefulSet, beta and on since 1.35): an int or a
    percent of replicas rounded down, never below 1; 1 when unset."""
    if value is None:
        return 1
    if isinstance(value, str) and value.endswith("%"):
        try:
            value = int(value[:-1]) * replicas_ // 100
        except ValueError:
            return 1
    return max(int(value), 1)


def revision_for(sts: Obj, ordinal: int, current: str, update: str) -> str:
    """Which revision a new pod gets: below a RollingUpdate's partition the current one, else the
    update one (so under OnDelete a deleted pod comes back updated)."""
    strategy = (sts.get("spec") or {}).get("updateStrategy") or {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return update
    partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
    return current if ordinal - start_ordinal(sts) < partition else update
