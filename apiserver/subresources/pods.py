"""Pod subresources: binding (the scheduler's write), eviction, and the node-backed connect ones.

`binding` sets spec.nodeName once (409 when the pod is already bound) and adds the PodScheduled
condition, as kube's pod registry does; `/api/v1/namespaces/ns/bindings` does the same. `eviction`
honours PodDisruptionBudgets (429 when one forbids it) and then deletes like DELETE does.
`log`, `exec`, `attach` and `portforward` need the pod's node; until hollow nodes serve them they
answer the error a real server gives for a pod that cannot be reached (`proxy` is `proxy.py`'s).
"""

from __future__ import annotations

import time
from typing import Any

from aiohttp import web

from apiserver import bodies, deletion, errors, go_shape, labels, responses, writing
from apiserver.context import Endpoint
from storage import errors as storage_errors

_SUCCESS = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


async def bind(ep: Endpoint, request: web.Request, binding: dict[str, Any], pod_name: str) -> web.StreamResponse:
    target = binding.get("target") or {}
    node = target.get("name") or ""
    if not node:
        cause = errors.required("target.name")
        raise errors.invalid("Binding", "", pod_name, [cause])
    pods = ep.server.registry.get("", "v1", "pods")
    assert pods is not None
    key = pods.key(ep.request_info.namespace, pod_name)

    def assign(pod: dict[str, Any] | None) -> dict[str, Any]:
        if pod is None:
            raise errors.not_found("pods", "", pod_name)
        meta = pod["metadata"]
        if meta.get("deletionTimestamp"):
            raise errors.conflict("pods", "", pod_name, "pod is being deleted, cannot be assigned to a host")
        spec = pod.setdefault("spec", {})
        if spec.get("nodeName"):
            raise errors.conflict("pods", "", pod_name, f"pod {pod_name} is already assigned to node \"{spec['nodeName']}\"")
        uid = (binding.get("metadata") or {}).get("uid")
        if uid and uid != meta.get("uid"):
            raise errors.conflict("pods", "", pod_name, "Precondition failed: UID in precondition: "
                                  f"{uid}, UID in object meta: {meta.get('uid')}")
        spec["nodeName"] = node
        annotations = (binding.get("metadata") or {}).get("annotations")
        if annotations:
            meta.setdefault("annotations", {}).update(annotations)
        conditions = [c for c in (pod.setdefault("status", {}).get("conditions") or []) if c.get("type") != "PodScheduled"]
        conditions.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                           "lastTransitionTime": _now()})
        pod["status"]["conditions"] = conditions
        plan = go_shape.plan_for("v1", "Pod")
        if plan is not None:  # spec.nodeName and the annotations go to their Go places
            go_shape.shape_top(pod, plan)
        return pod

    if writing.dry_run(request.query):
        return responses.json_response(_SUCCESS, status=201)
    try:
        await ep.server.store.guaranteed_update(key, assign)
    except storage_errors.StorageError as exc:
        raise errors.from_storage(exc, "pods", "", pod_name) from None
    return responses.json_response(_SUCCESS, status=201)


def _budgets_forbid(ep: Endpoint, pod: dict[str, Any]) -> str | None:
    """The name of a PodDisruptionBudget that allows no disruption for this pod, if any."""
    pdbs = ep.server.registry.get("policy", "v1", "poddisruptionbudgets")
    if pdbs is None:
        return None
    namespace = pod["metadata"].get("namespace", "")
    pod_labels = pod["metadata"].get("labels") or {}
    for record in ep.server.store.list(f"{pdbs.key_prefix}{namespace}/").records:
        pdb = responses.decode(record.value)
        selector = (pdb.get("spec") or {}).get("selector")
        if selector is None or not labels.from_label_selector(selector).matches(pod_labels):
            continue
        if (pdb.get("status") or {}).get("disruptionsAllowed", 0) <= 0:
            return pdb["metadata"]["name"]
    return None


async def evict(ep: Endpoint, request: web.Request) -> web.StreamResponse:
    eviction = await bodies.read_object(request)
    name = ep.request_info.name
    pod = responses.decode(ep.stored(name).value)
    phase = (pod.get("status") or {}).get("phase")
    if phase not in ("Succeeded", "Failed") and not pod["metadata"].get("deletionTimestamp"):
        budget = _budgets_forbid(ep, pod)
        if budget:
            raise errors.APIError(
                429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.",
                {"causes": [{"reason": "DisruptionBudget",
                             "message": f"The disruption budget {budget} needs 1 healthy pods and has 0 currently"}]},
            )
    opts = deletion.options(eviction.get("deleteOptions") or {}, request.query)
    await deletion.delete(ep, name, opts)
    return responses.json_response(_SUCCESS, status=201)


async def connect(ep: Endpoint, request: web.Request) -> web.StreamResponse:
    """log/exec/attach/portforward: the pod must exist and be on a node that serves it."""
    name = ep.request_info.name
    pod = responses.decode(ep.stored(name).value)
    node = (pod.get("spec") or {}).get("nodeName")
    if not node:
        raise errors.bad_request(f"pod {name} does not have a host assigned")
    raise errors.APIError(
        503, "ServiceUnavailable",
        f"no kubelet is serving node {node!r}: haru's hollow nodes do not serve "
        f"{ep.request_info.subresource} yet",
    )
