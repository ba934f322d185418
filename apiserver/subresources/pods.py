"""Pod subresources: binding (the scheduler's write), eviction, and the node-backed connect ones.

`binding` sets spec.nodeName once (409 when the pod is already bound), adds the PodScheduled
condition and clears status.nominatedNodeName (KEP-5278's ClearingNominatedNodeNameAfterBinding,
on since 1.35), as kube's pod registry does; `/api/v1/namespaces/ns/bindings` does the same. `eviction`
runs the admission chain on the Eviction, honours PodDisruptionBudgets (`eviction.py`: 429 when one forbids it, else the budget is charged)
and then deletes like DELETE does.
`log`, `exec`, `attach` and `portforward` (`connect`) choose the container, translate the options into
the kubelet's query and go to the pod's node's kubelet through `kubelet.py` (`proxy` is `proxy.py`'s).
"""

from __future__ import annotations

import datetime
import time
import urllib.parse
from typing import Any

from aiohttp import web

from admission import attributes as admission_attributes
from apiserver import admitting, bodies, deletion, errors, go_shape, query_flags, responses, writing
from apiserver.context import Endpoint
from apiserver.subresources import eviction as budgets
from apiserver.subresources import kubelet
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
        # Once bound, a nomination (by preemption, or by an autoscaler) is stale information.
        pod["status"].pop("nominatedNodeName", None)
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


async def evict(ep: Endpoint, request: web.Request) -> web.StreamResponse:
    eviction = await bodies.read_object(request)
    name = ep.request_info.name
    pod = responses.decode(ep.stored(name).value)
    # Admission sees the Eviction, as upstream's create of pods/eviction (NodeRestriction: a kubelet
    # evicts only pods bound to it).
    attrs = admitting.attributes(ep, admission_attributes.CREATE, eviction, None, request.query,
                                 subresource="eviction", user=ep.user, name=name)
    admitting.admit(ep, attrs)
    admitting.validate(ep, attrs)
    opts = deletion.options(eviction.get("deleteOptions") or {}, request.query)
    await budgets.check_budgets(ep, pod, opts.dry_run)
    if not opts.dry_run:
        opts = await budgets.mark_disruption_target(ep, name, opts)
    await deletion.delete(ep, name, opts)
    return responses.json_response(_SUCCESS, status=201)


def _container_names(containers: list[dict[str, Any]] | None) -> str:
    return " ".join(c.get("name", "") for c in containers or [])


def choose_container(pod: dict[str, Any], requested: str) -> str:
    """The container a connect request is for, or kube's 400 for a missing or unknown one."""
    name = pod["metadata"]["name"]
    spec = pod.get("spec") or {}
    if requested:
        known = {c.get("name") for key in ("containers", "initContainers", "ephemeralContainers")
                 for c in spec.get(key) or []}
        if requested not in known:
            raise errors.bad_request(f"container {requested} is not valid for pod {name}")
        return requested
    containers = spec.get("containers") or []
    if len(containers) == 1:
        return str(containers[0].get("name", ""))
    if not containers:
        raise errors.bad_request(f"a container name must be specified for pod {name}")
    message = f"a container name must be specified for pod {name}, choose one of: [{_container_names(containers)}]"
    if spec.get("initContainers"):
        message += f" or one of the init containers: [{_container_names(spec['initContainers'])}]"
    if spec.get("ephemeralContainers"):
        message += f" or one of the ephemeral containers: [{_container_names(spec['ephemeralContainers'])}]"
    raise errors.bad_request(message)


def _int_option(query: Any, name: str) -> int | None:
    raw = query.get(name)
    if raw is None or raw == "":
        return None
    try:
        return int(raw)
    except ValueError:
        raise errors.bad_request(f'strconv.ParseInt: parsing "{raw}": invalid syntax') from None


def _log_query(ep: Endpoint, query: Any) -> list[tuple[str, str]]:
    """PodLogOptions from the client's query, validated as kube does, in the kubelet's spelling."""
    name = ep.request_info.name
    params: list[tuple[str, str]] = []
    for flag in ("follow", "previous", "timestamps"):
        if query_flags.enabled(query, flag):
            params.append((flag, "true"))
    numbers = {key: _int_option(query, key) for key in ("sinceSeconds", "tailLines", "limitBytes")}
    since_time = query.get("sinceTime") or ""
    if since_time:
        try:
            parsed = datetime.datetime.fromisoformat(since_time.replace("Z", "+00:00"))
        except ValueError:
            raise errors.bad_request(
                f'parsing time "{since_time}" as "2006-01-02T15:04:05Z07:00": cannot parse') from None
        since_time = parsed.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    causes = []
    if numbers["tailLines"] is not None and numbers["tailLines"] < 0:
        causes.append(errors.field_error("FieldValueInvalid", "tailLines",
                                         f"Invalid value: {numbers['tailLines']}: must be greater than or equal to 0"))
    if numbers["limitBytes"] is not None and numbers["limitBytes"] < 1:
        causes.append(errors.field_error("FieldValueInvalid", "limitBytes",
                                         f"Invalid value: {numbers['limitBytes']}: must be greater than 0"))
    if numbers["sinceSeconds"] is not None and since_time:
        causes.append(errors.field_error("FieldValueForbidden", "",
                                         "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified"))
    elif numbers["sinceSeconds"] is not None and numbers["sinceSeconds"] < 1:
        causes.append(errors.field_error("FieldValueInvalid", "sinceSeconds",
                                         f"Invalid value: {numbers['sinceSeconds']}: must be greater than 0"))
    if causes:
        raise errors.invalid("PodLogOptions", "", name, causes)
    if numbers["sinceSeconds"] is not None:
        params.append(("sinceSeconds", str(numbers["sinceSeconds"])))
    if since_time:
        params.append(("sinceTime", since_time))
    for key in ("tailLines", "limitBytes"):
        if numbers[key] is not None:
            params.append((key, str(numbers[key])))
    return params


def _stream_query(query: Any, attach: bool) -> list[tuple[str, str]]:
    """PodExecOptions/PodAttachOptions in the kubelet's names: input, output, error, tty as "1"."""
    params = [] if attach else [("command", c) for c in query.getall("command", [])]
    for client_name, kubelet_name in (("stdin", "input"), ("stdout", "output"), ("stderr", "error"), ("tty", "tty")):
        if query_flags.enabled(query, client_name):
            params.append((kubelet_name, "1"))
    return params


def _ports_query(query: Any) -> list[tuple[str, str]]:
    """PodPortForwardOptions: `ports` may repeat or be comma separated; the kubelet reads `port`."""
    params = []
    for value in query.getall("ports", []):
        for part in value.split(","):
            port = _int_option({"ports": part.strip()}, "ports")
            if port is None or not 0 < port < 65536:
                raise errors.bad_request(f"port {part.strip()} must be > 0 and < 65536")
            params.append(("port", str(port)))
    return params


async def connect(ep: Endpoint, request: web.Request) -> web.StreamResponse:
    """log/exec/attach/portforward: to the kubelet of the pod's node, as kube's pod REST does."""
    name = ep.request_info.name
    pod = responses.decode(ep.stored(name).value)
    namespace = ep.request_info.namespace
    sub = ep.request_info.subresource
    query = request.query
    node = (pod.get("spec") or {}).get("nodeName")
    if sub == "portforward":
        path, params = f"/portForward/{namespace}/{name}", _ports_query(query)
    else:
        container = choose_container(pod, query.get("container", ""))
        if sub == "log":
            params = _log_query(ep, query)
            if not node:
                # kube's LogLocation: no location for an unscheduled pod, and no stream is 204 No Content.
                return web.Response(status=204)
            path = f"/containerLogs/{namespace}/{name}/{container}"
        else:
            params = _stream_query(query, attach=sub == "attach")
            path = f"/{sub}/{namespace}/{name}/{container}"
    if not node:
        raise errors.bad_request(f"pod {name} does not have a host assigned")
    target = kubelet.locate(ep, node)
    path_and_query = path + ("?" + urllib.parse.urlencode(params) if params else "")
    if request.headers.get("Upgrade", "").lower() == "websocket":
        return await kubelet.relay_upgrade(ep, request, target, path_and_query)
    # Logs answer a Status when the kubelet refuses; the others pass its answer through as it is.
    return await kubelet.stream(ep, request, target, path_and_query, checked=sub == "log")
