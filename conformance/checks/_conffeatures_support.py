"""Shared pieces of the 1.36 feature checks (`feature_*.py`): object builders, waits, and the few
resources discovery does not hand the suite.

The suite's `Context` finds kinds through discovery's preferred versions, so kinds served only in
a non-preferred version (Workload and PodGroup in scheduling.k8s.io/v1alpha2, DeviceTaintRule in
resource.k8s.io/v1beta2, ResourcePoolStatusRequest in v1alpha3) are written down here, with
`make`/`fetch`/`drop` that use them and clean up like `Context.create`. DRA checks that need
devices publish their own ResourceSlice (`own_slice`) with a driver named after the check's
namespace, so they never compete for the cluster's real GPUs and never see another check's
devices. `exec_output` runs a command in a container over the websocket exec protocol
(v5.channel.k8s.io), as kubectl does. Only `feature_*` check modules import this.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any, Awaitable, Callable, Sequence

import aiohttp

from client import errors
from client.resources import DEVICETAINTRULES, PODGROUPS, WORKLOADS, Resource
from conformance.context import Context

Obj = dict[str, Any]
PAUSE = "registry.k8s.io/pause:3.10"
RESOURCE_V1 = "resource.k8s.io/v1"

POOL_STATUS_REQUESTS = Resource("resource.k8s.io", "v1alpha3", "resourcepoolstatusrequests",
                                "ResourcePoolStatusRequest", namespaced=False)
_EXPLICIT = {(r.api_version, r.kind): r for r in (WORKLOADS, PODGROUPS, DEVICETAINTRULES, POOL_STATUS_REQUESTS)}


def _resource(ctx: Context, api_version: str, kind: str) -> Resource:
    return _EXPLICIT.get((api_version, kind)) or ctx.api.resource(api_version, kind)


async def make(ctx: Context, obj: Obj) -> Obj:
    """Create `obj` in the check's namespace (or cluster-wide, deleted again when the check ends)."""
    resource = _resource(ctx, obj["apiVersion"], obj["kind"])
    if not resource.namespaced:
        created = await ctx.api.create(resource, obj)
        name = created["metadata"]["name"]
        ctx.defer(lambda: _quietly(ctx.api.delete(resource, name)))
        return created
    return await ctx.api.create(resource, obj, ctx.namespace)


async def fetch(ctx: Context, api_version: str, kind: str, name: str, subresource: str | None = None) -> Obj:
    resource = _resource(ctx, api_version, kind)
    return await ctx.api.get(resource, name, ctx.namespace if resource.namespaced else None, subresource)


async def patch(ctx: Context, api_version: str, kind: str, name: str, body: Any, **options: Any) -> Obj:
    resource = _resource(ctx, api_version, kind)
    return await ctx.api.patch(resource, name, body, ctx.namespace if resource.namespaced else None, **options)


async def _quietly(call: Awaitable[Any]) -> None:
    try:
        await call
    except errors.APIError as err:
        if not errors.is_not_found(err):
            raise


async def refused(call: Awaitable[Any], code: int, reason: str = "", *, contains: str = "") -> errors.APIError:
    """Await `call`, which must fail with `code` (and `reason`, and `contains` in the message)."""
    try:
        await call
    except errors.APIError as err:
        assert err.code == code and (not reason or err.reason == reason), \
            f"expected {code} {reason}, got {err.code} {err.reason}: {err.message}"
        assert contains in err.message, f"expected {contains!r} in the message, got {err.message!r}"
        return err
    raise AssertionError(f"the request was accepted; expected {code} {reason}")


# Nodes -------------------------------------------------------------------------------------------

def _ready(node: Obj) -> bool:
    conditions = (node.get("status") or {}).get("conditions") or []
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
    return ready and not (node.get("spec") or {}).get("unschedulable") and not any(
        t.get("effect") in ("NoSchedule", "NoExecute") for t in (node.get("spec") or {}).get("taints") or [])


async def schedulable_nodes(ctx: Context) -> list[Obj]:
    """Ready nodes without NoSchedule/NoExecute taints, sorted by name."""
    nodes = (await ctx.list("v1", "Node"))["items"]
    return sorted((n for n in nodes if _ready(n)), key=lambda n: n["metadata"]["name"])


def cores(node: Obj) -> int:
    """Whole allocatable CPUs of a node ("16" or "15500m")."""
    text = str(((node.get("status") or {}).get("allocatable") or {}).get("cpu") or "0")
    return int(text[:-1]) // 1000 if text.endswith("m") else int(float(text))


async def a_node(ctx: Context, index: int = 0) -> str:
    nodes = await schedulable_nodes(ctx)
    if len(nodes) <= index:
        ctx.skip(f"the check needs {index + 1} schedulable nodes, the cluster has {len(nodes)}")
    return nodes[index]["metadata"]["name"]


# DRA objects -------------------------------------------------------------------------------------

def driver_of(ctx: Context) -> str:
    """A DRA driver name no other check uses: the check's namespace under a domain of the suite."""
    return f"{ctx.namespace}.conformance.haru.dev"


def gpu_like(name: str, **attributes: Any) -> Obj:
    """A device with typed attributes: ints, bools and strings map to int/bool/string, `v:` to version."""
    typed: dict[str, Obj] = {}
    for key, value in attributes.items():
        if isinstance(value, bool):
            typed[key] = {"bool": value}
        elif isinstance(value, int):
            typed[key] = {"int": value}
        elif isinstance(value, str) and value.startswith("v:"):
            typed[key] = {"version": value[2:]}
        elif isinstance(value, dict):
            typed[key] = value  # already typed (list attributes)
        else:
            typed[key] = {"string": value}
    device: Obj = {"name": name}
    if typed:
        device["attributes"] = typed
    return device


async def own_slice(ctx: Context, node: str | None, devices: list[Obj], *, pool: str = "",
                    extra: Obj | None = None) -> Obj:
    """Publish `devices` in a ResourceSlice of the check's own driver, local to `node` (None: all nodes)."""
    driver = driver_of(ctx)
    spec: Obj = {"driver": driver, "pool": {"name": pool or node or "cluster", "generation": 1,
                                            "resourceSliceCount": 1}}
    if node:
        spec["nodeName"] = node
    elif not (extra or {}).get("perDeviceNodeSelection"):
        spec["allNodes"] = True
    if devices:
        spec["devices"] = devices
    spec.update(extra or {})
    return await make(ctx, {"apiVersion": RESOURCE_V1, "kind": "ResourceSlice",
                            "metadata": {"generateName": f"{ctx.namespace}-"}, "spec": spec})


async def own_class(ctx: Context, *, selectors: Sequence[str] = (), extra: Obj | None = None) -> str:
    """A DeviceClass that selects the check's own driver (plus `selectors`); its name."""
    name = f"{ctx.namespace}-{ctx.name('class')}"
    exprs = [f'device.driver == "{driver_of(ctx)}"', *selectors]
    spec: Obj = {"selectors": [{"cel": {"expression": e}} for e in exprs]}
    spec.update(extra or {})
    await make(ctx, {"apiVersion": RESOURCE_V1, "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec})
    return name


def exactly(name: str, device_class: str, *, count: int | None = None, selectors: Sequence[str] = (),
            **more: Any) -> Obj:
    request: Obj = {"deviceClassName": device_class, **more}
    if count is not None:
        request["count"] = count
    if selectors:
        request["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    return {"name": name, "exactly": request}


async def claim(ctx: Context, requests: list[Obj], *, name: str = "", constraints: list[Obj] | None = None) -> Obj:
    devices: Obj = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    return await make(ctx, {"apiVersion": RESOURCE_V1, "kind": "ResourceClaim",
                            "metadata": {"name": name or ctx.name("claim")}, "spec": {"devices": devices}})


def pod_body(name: str, *, claims: dict[str, str] | None = None, templates: dict[str, str] | None = None,
             requests: Obj | None = None, spec: Obj | None = None, command: list[str] | None = None,
             labels: dict[str, str] | None = None, image: str = PAUSE) -> Obj:
    """A pause pod; `claims` maps pod claim names to ResourceClaims, `templates` to templates."""
    container: Obj = {"name": "c", "image": image}
    if command:
        container["command"] = command
    entries = [{"name": k, "resourceClaimName": v} for k, v in (claims or {}).items()]
    entries += [{"name": k, "resourceClaimTemplateName": v} for k, v in (templates or {}).items()]
    resources: Obj = {}
    if entries:
        resources["claims"] = [{"name": e["name"]} for e in entries]
    if requests:
        resources["requests"] = requests
        resources["limits"] = {k: v for k, v in requests.items() if k not in ("cpu", "memory")} or None
        if resources["limits"] is None:
            del resources["limits"]
    if resources:
        container["resources"] = resources
    body: Obj = {"containers": [container], "terminationGracePeriodSeconds": 0}
    if entries:
        body["resourceClaims"] = entries
    body.update(spec or {})
    metadata: Obj = {"name": name}
    if labels:
        metadata["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": body}


_ACCOUNTS_SEEN: set[str] = set()


async def default_account(ctx: Context) -> None:
    """Wait for the namespace's `default` ServiceAccount: until the controller makes it, the
    ServiceAccount admission plugin refuses pods (upstream's e2e framework waits for it too)."""
    if ctx.namespace in _ACCOUNTS_SEEN:
        return
    await ctx.eventually(lambda: ctx.get("v1", "ServiceAccount", "default"), what="the default ServiceAccount")
    _ACCOUNTS_SEEN.add(ctx.namespace)


async def pod(ctx: Context, name: str = "", **options: Any) -> Obj:
    """Create a pod (see `pod_body`); it is deleted at once, without grace, when the check ends."""
    name = name or ctx.name("pod")
    await default_account(ctx)
    created = await ctx.create(pod_body(name, **options))
    ctx.defer(lambda: _quietly(ctx.delete("v1", "Pod", name, grace_period_seconds=0)))
    return created


async def get_pod(ctx: Context, name: str) -> Obj:
    return await ctx.get("v1", "Pod", name)


async def scheduled(ctx: Context, name: str, timeout: float = 30.0) -> Obj:
    """Wait until the pod is bound to a node; the pod."""
    async def probe() -> Obj | None:
        found = await get_pod(ctx, name)
        return found if (found.get("spec") or {}).get("nodeName") else None
    return await ctx.eventually(probe, timeout=timeout, what=f"pod {name} to be scheduled")


async def running(ctx: Context, name: str, timeout: float = 30.0) -> Obj:
    async def probe() -> Obj | None:
        found = await get_pod(ctx, name)
        return found if (found.get("status") or {}).get("phase") == "Running" else None
    return await ctx.eventually(probe, timeout=timeout, what=f"pod {name} to run")


def pod_condition(pod_obj: Obj, kind: str) -> Obj | None:
    for condition in (pod_obj.get("status") or {}).get("conditions") or []:
        if condition.get("type") == kind:
            return condition
    return None


async def unschedulable(ctx: Context, name: str, timeout: float = 30.0) -> Obj:
    """Wait until the scheduler says PodScheduled=False (reason Unschedulable); the pod."""
    async def probe() -> Obj | None:
        found = await get_pod(ctx, name)
        condition = pod_condition(found, "PodScheduled")
        assert not (found.get("spec") or {}).get("nodeName"), f"pod {name} was bound to {found['spec']['nodeName']}"
        if condition and condition.get("status") == "False" and condition.get("reason") == "Unschedulable":
            return found
        return None
    return await ctx.eventually(probe, timeout=timeout, what=f"pod {name} to be reported Unschedulable")


async def allocated(ctx: Context, name: str, timeout: float = 30.0) -> Obj:
    """Wait until the ResourceClaim has an allocation; the claim."""
    async def probe() -> Obj | None:
        found = await ctx.get(RESOURCE_V1, "ResourceClaim", name)
        return found if (found.get("status") or {}).get("allocation") else None
    return await ctx.eventually(probe, timeout=timeout, what=f"claim {name} to be allocated")


def results(claim_obj: Obj) -> list[Obj]:
    return ((((claim_obj.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results")) or []


def devices_of(claim_obj: Obj) -> list[str]:
    return sorted(r["device"] for r in results(claim_obj))


async def delete_pod_and_wait(ctx: Context, name: str, timeout: float = 30.0) -> None:
    await _quietly(ctx.delete("v1", "Pod", name, grace_period_seconds=0))

    async def gone() -> bool:
        try:
            await get_pod(ctx, name)
        except errors.APIError as err:
            if errors.is_not_found(err):
                return True
            raise
        return False
    await ctx.eventually(gone, timeout=timeout, what=f"pod {name} to be gone")


async def stays(ctx: Context, probe: Callable[[], Awaitable[bool]], rounds: int = 10) -> None:
    """`probe` must keep holding over a few polls (a negative outcome has no event to wait for)."""
    for _ in range(rounds):
        assert await probe(), "the condition stopped holding"
        await asyncio.sleep(0.1)


# Exec --------------------------------------------------------------------------------------------

async def exec_output(ctx: Context, pod_name: str, command: list[str], container: str = "c") -> tuple[str, int]:
    """Run `command` in the container (websocket, v5.channel.k8s.io); (stdout, exit code)."""
    params = [("container", container), ("stdout", "true"), ("stderr", "true")]
    params += [("command", part) for part in command]
    url = ctx.api.config.server + f"/api/v1/namespaces/{ctx.namespace}/pods/{pod_name}/exec"
    stdout: list[bytes] = []
    code = 0
    async with ctx.api.session.ws_connect(url, params=params, protocols=("v5.channel.k8s.io",
                                                                         "v4.channel.k8s.io")) as ws:
        async for message in ws:
            if message.type != aiohttp.WSMsgType.BINARY or not message.data:
                continue
            channel, payload = message.data[0], message.data[1:]
            if channel == 1:
                stdout.append(payload)
            elif channel == 3:
                status = json.loads(payload or b"{}")
                if status.get("status") == "Failure":
                    causes = ((status.get("details") or {}).get("causes")) or []
                    code = next((int(c["message"]) for c in causes if c.get("reason") == "ExitCode"), 1)
    return b"".join(stdout).decode(errors="replace"), code


# Other identities --------------------------------------------------------------------------------

async def service_account(ctx: Context, rules: list[Obj], *,
                          namespaced_rules: list[Obj] | None = None) -> tuple[str, str]:
    """A fresh ServiceAccount bound to a ClusterRole with `rules` (and a Role with `namespaced_rules`
    in the check's namespace); (username, bearer token)."""
    name = ctx.name("sa")
    await ctx.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}})
    username = f"system:serviceaccount:{ctx.namespace}:{name}"
    subject = [{"kind": "ServiceAccount", "name": name, "namespace": ctx.namespace}]
    role = f"{ctx.namespace}-{name}"
    rbac = "rbac.authorization.k8s.io/v1"
    if rules:
        await ctx.create({"apiVersion": rbac, "kind": "ClusterRole", "metadata": {"name": role}, "rules": rules})
        await ctx.create({"apiVersion": rbac, "kind": "ClusterRoleBinding", "metadata": {"name": role},
                          "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
                          "subjects": subject})
    if namespaced_rules:
        await grant_in_namespace(ctx, subject, namespaced_rules)
    token = await ctx.api.request("POST", f"/api/v1/namespaces/{ctx.namespace}/serviceaccounts/{name}/token",
                                  body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                        "spec": {"expirationSeconds": 3600}})
    return username, token["status"]["token"]


async def grant_in_namespace(ctx: Context, subjects: list[Obj], rules: list[Obj]) -> None:
    """A Role with `rules` in the check's namespace, bound to `subjects`."""
    role = ctx.name("role")
    rbac = "rbac.authorization.k8s.io/v1"
    await ctx.create({"apiVersion": rbac, "kind": "Role", "metadata": {"name": role}, "rules": rules})
    await ctx.create({"apiVersion": rbac, "kind": "RoleBinding", "metadata": {"name": role},
                      "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
                      "subjects": subjects})


def rule(verbs: list[str], groups: list[str], resources: list[str], names: list[str] | None = None) -> Obj:
    found: Obj = {"verbs": verbs, "apiGroups": groups, "resources": resources}
    if names:
        found["resourceNames"] = names
    return found


async def as_token(ctx: Context, token: str, method: str, url: str, *, headers: dict[str, str] | None = None,
                   body: Any = None, ssl: Any = None) -> tuple[int, Any]:
    """One request with `token` instead of the suite's credentials; (status, decoded body or text)."""
    sent = {"Authorization": f"Bearer {token}", "Accept": "application/json", **(headers or {})}
    # The suite's own client certificate must not ride along: trust the server, present nothing.
    bare = dataclasses.replace(ctx.api.config, token=None, client_cert_pem=None, client_key_pem=None)
    context = bare.ssl_context() if ssl is None else ssl
    async with aiohttp.ClientSession() as session:
        async with session.request(method, url, headers=sent, json=body, ssl=context) as response:
            text = await response.text()
            try:
                return response.status, json.loads(text)
            except ValueError:
                return response.status, text
