"""The audit filter: which events a request produces and what they hold.

`app.py` installs `filter` right after authentication, as upstream's WithAudit sits after
WithAuthentication, so the user (and the impersonator) are known, and before authorization, which
adds the `authorization.k8s.io/decision` and `authorization.k8s.io/reason` annotations through
`note_decision`. Per request the policy gives a level; None records nothing. Otherwise:

- RequestReceived as the request arrives;
- ResponseStarted when the headers of a long-running answer (watch, exec, attach, port-forward,
  proxy, a followed log) go out (`on_prepare`, the app's on_response_prepare signal);
- ResponseComplete when the answer is done, with responseStatus; Panic instead when a bug raised.

At Request level and up, `requestObject` is the body the handler read (`note_body`, called by
`bodies.read`), decoded whatever its media type; at RequestResponse, `responseObject` is the JSON
answer (never a watch stream). Every response carries `Audit-Id` (the client's own Audit-ID header
if it sent one, else a new UUID), audit log or not, as upstream's WithAuditInit does.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

import msgspec
from aiohttp import web

from apiserver import errors
from apiserver.audit import event as ev
from apiserver.audit.log_file import LogFile
from apiserver.audit.policy import Decision, Policy
from apiserver.authorization import attributes as authz_attributes
from apiserver.requestinfo import RequestInfo

HEADER = "Audit-Id"
_LEVELS = {"None": 0, "Metadata": 1, "Request": 2, "RequestResponse": 3}
_CONNECT = frozenset({"exec", "attach", "portforward", "proxy"})
_encode = msgspec.json.encode


@dataclass
class Context:
    """One request's audit state, kept on the request under `KEY`."""
    audit_id: str
    decision: Decision | None = None
    event: dict[str, Any] | None = None
    long_running: bool = False
    body: bytes | None = None
    media: str = ""
    annotations: dict[str, str] = field(default_factory=dict)


KEY: web.RequestKey[Context] = web.RequestKey("haru_audit", Context)


def new_id() -> str:
    """A random (version 4) UUID, as text: uuid.uuid4() without its object, for every answer."""
    h = os.urandom(16).hex()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:]}"


_VARIANT = {c: "89ab"[int(c, 16) & 3] for c in "0123456789abcdef"}


async def on_prepare(request: web.Request, response: web.StreamResponse) -> None:
    """Every answer's Audit-Id header; the ResponseStarted event of a long-running one."""
    ctx = request.get(KEY)
    if ctx is None:  # no audit log, or a request the filter never saw (a 401)
        response.headers[HEADER] = request.headers.get("Audit-ID") or new_id()
        return
    response.headers[HEADER] = ctx.audit_id
    if ctx.event is not None and ctx.long_running:
        auditor: Auditor = request.app[AUDITOR]
        auditor.emit(ctx, "ResponseStarted", ev.response_status(response.status))


def note_body(request: web.Request, body: bytes, media: str) -> None:
    ctx = request.get(KEY)
    if ctx is not None and ctx.event is not None:
        ctx.body, ctx.media = body, media


def note_decision(request: web.Request, allowed: bool, reason: str) -> None:
    ctx = request.get(KEY)
    if ctx is not None and ctx.event is not None:
        ctx.annotations["authorization.k8s.io/decision"] = "allow" if allowed else "forbid"
        ctx.annotations["authorization.k8s.io/reason"] = reason


class Auditor:
    """The policy and the log file of a server with `--audit-policy-file` and `--audit-log-path`."""

    def __init__(self, policy: Policy, log: LogFile) -> None:
        self.policy = policy
        self.log = log

    def begin(self, request: web.Request, info: RequestInfo, user: Any, impersonator: Any | None) -> Context:
        ctx = request[KEY] = Context(request.headers.get("Audit-ID") or new_id())
        actor = impersonator or user
        verb = info.verb
        # Upstream's policy checker reads the authorizer's attributes of the request: the same here.
        decision = self.policy.evaluate(authz_attributes.from_request(user, info))
        if decision.level == "None":
            return ctx
        ctx.decision = decision
        ctx.long_running = verb == "watch" or info.subresource in _CONNECT or (
            info.subresource == "log" and request.query.get("follow") in ("true", "1"))
        event: dict[str, Any] = {
            "kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": decision.level, "auditID": ctx.audit_id,
            "stage": "", "requestURI": request.raw_path, "verb": verb, "user": actor.info(),
        }
        if impersonator is not None:
            event["impersonatedUser"] = user.info()
        event["sourceIPs"] = _source_ips(request)
        if request.headers.get("User-Agent"):
            event["userAgent"] = request.headers["User-Agent"]
        ref = ev.object_ref(info)
        if ref is not None:
            event["objectRef"] = ref
        event["requestReceivedTimestamp"] = ev.micro_time(time.time())
        ctx.event = event
        self.emit(ctx, "RequestReceived")
        return ctx

    def emit(self, ctx: Context, stage: str, status: dict[str, Any] | None = None,
             response_object: Any = None) -> None:
        decision, event = ctx.decision, ctx.event
        assert decision is not None and event is not None
        if stage in decision.omit_stages:
            return
        out = dict(event)
        out["stage"] = stage
        if status is not None:
            out["responseStatus"] = status
        level = _LEVELS[decision.level]
        if level >= 2 and ctx.body:
            obj = _decode_body(ctx.body, ctx.media)
            if obj is not None:
                out["requestObject"] = ev.without_managed_fields(obj) if decision.omit_managed_fields else obj
        if level >= 3 and response_object is not None:
            out["responseObject"] = (ev.without_managed_fields(response_object) if decision.omit_managed_fields
                                     else response_object)
        # Timestamps and annotations go last, in the Go struct's order.
        received = out.pop("requestReceivedTimestamp")
        out["requestReceivedTimestamp"] = received
        out["stageTimestamp"] = ev.micro_time(time.time())
        if ctx.annotations and stage != "RequestReceived":
            out["annotations"] = dict(ctx.annotations)
        self.log.write(_encode(out) + b"\n")

    def complete(self, ctx: Context, response: web.StreamResponse) -> None:
        if ctx.event is None:
            return
        if ctx.body and ctx.event.get("objectRef") is not None and ctx.event["verb"] == "create":
            ev.fill_ref_from_object(ctx.event["objectRef"], _decode_body(ctx.body, ctx.media))
        response_object = None
        if ctx.decision is not None and ctx.decision.level == "RequestResponse" and isinstance(response, web.Response):
            response_object = _json_body(response)
        status = ev.response_status(response.status)
        if isinstance(response_object, dict) and response_object.get("kind") == "Status" and response.status >= 400:
            status = ev.response_status(response.status, response_object)
        self.emit(ctx, "ResponseComplete", status, response_object)

    def failed(self, ctx: Context, err: errors.APIError) -> None:
        if ctx.event is None:
            return
        body = err.status()
        self.emit(ctx, "ResponseComplete", ev.response_status(err.code, body), body)

    def panicked(self, ctx: Context, exc: BaseException) -> None:
        if ctx.event is None:
            return
        status = {"metadata": {}, "status": "Failure", "message": f"APIServer panic'd: {exc}",
                  "reason": "InternalError", "code": 500}
        self.emit(ctx, "Panic", status)


AUDITOR: web.AppKey[Auditor] = web.AppKey("haru_auditor", Auditor)


def _source_ips(request: web.Request) -> list[str]:
    """upstream's utilnet.SourceIPs: X-Forwarded-For, then X-Real-Ip, then the peer, without repeats."""
    ips: list[str] = []
    forwarded = request.headers.get("X-Forwarded-For", "")
    for part in forwarded.split(","):
        if part.strip():
            ips.append(part.strip())
    real = request.headers.get("X-Real-Ip", "").strip()
    if real and real not in ips:
        ips.append(real)
    if request.remote and request.remote not in ips:
        ips.append(request.remote)
    return ips


def _decode_body(body: bytes, media: str) -> Any:
    try:
        if media.endswith("protobuf"):
            from apiserver import protobuf

            return protobuf.decode(body)
        if media.endswith("yaml"):
            import yaml

            return yaml.safe_load(body)
        return msgspec.json.decode(body)
    except Exception:  # noqa: BLE001 - an undecodable body was refused by its handler; log none
        return None


def _json_body(response: web.Response) -> Any:
    body = response.body
    if not isinstance(body, (bytes, bytearray)) or not body or "json" not in (response.content_type or ""):
        return None
    try:
        return msgspec.json.decode(body)
    except msgspec.DecodeError:
        return None


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


async def filter(request: web.Request, handler: Handler, info: RequestInfo, user: Any,
                 impersonator: Any | None) -> web.StreamResponse:
    """Run `handler` with the events the policy asks for around it."""
    auditor: Auditor = request.app[AUDITOR]
    ctx = auditor.begin(request, info, user, impersonator)
    if ctx.event is None:
        return await handler(request)
    try:
        response = await handler(request)
    except errors.APIError as err:
        auditor.failed(ctx, err)
        raise
    except (web.HTTPException, ConnectionResetError):
        raise
    except Exception as exc:
        auditor.panicked(ctx, exc)
        raise
    auditor.complete(ctx, response)
    return response
