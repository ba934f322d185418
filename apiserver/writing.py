"""The steps every write shares, in the order kube-apiserver runs them.

create: check kind → namespace rules → drop unknown fields (fieldValidation) → defaults → Go
shape (built-in kinds: omitempty, Go field order; `go_shape.py`) → managedFields →
NamespaceLifecycle → MUTATING ADMISSION (LimitRanger, Priority, MutatingAdmissionPolicy; defaults
again if a policy replaced the object) → server-owned metadata (generateName, uid, timestamps) →
strategy prepare/validate → VALIDATING ADMISSION (LimitRanger, Priority,
ValidatingAdmissionPolicy, ResourceQuota) → the managedFields put back → Go shape again (what
the strategy and admission added goes to its Go place).
update: the same with the old object: immutable metadata carried over, defaults, Go shape,
managedFields, mutating admission, the strategy's update hooks, validating admission, Go shape.
This is upstream's order: the handler runs mutating admission on the decoded, defaulted object
before rest.BeforeCreate / BeforeUpdate (PrepareForCreate, generated names, Validate), and
validating admission after them, just before storage. delete: validating admission sees the stored object as oldObject
(`admit_delete`, called by `deletion.py` once the preconditions passed). Handlers
(`create.py`, `update.py`, `patch.py`) call `prepare_create` / `prepare_update` and then write
through the store; nothing here touches storage but the namespace lookup. The chain itself is
`admission/`; `admitting.py` connects it to this server.
"""

from __future__ import annotations

import secrets
import time
import uuid
from typing import Any, Mapping

from admission import attributes as admission_attributes
from apiserver import admitting, allocations, bodies, errors, field_validation, go_shape, managed_fields, type_check
from apiserver.authorization import escalation
from apiserver.context import Endpoint
from apiserver.strategy import Strategy

# kube's generateName alphabet: no vowels, no easily confused characters.
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_CLEARED_ON_CREATE = ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink")


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def dry_run(query: Mapping[str, str]) -> bool:
    values = [v for v in query.getall("dryRun", [])] if hasattr(query, "getall") else [query.get("dryRun", "")]
    return check_dry_run([v for v in values if v])


def check_dry_run(values: list[str]) -> bool:
    for value in values:
        if value != "All":
            raise errors.bad_request(f'dryRun: Unsupported value: "{value}": supported values: "All"')
    return bool(values)


def generated_name(prefix: str) -> str:
    return prefix + "".join(secrets.choice(_NAME_ALPHABET) for _ in range(5))


def check_namespace(ep: Endpoint, obj: dict[str, Any]) -> None:
    """Namespace of body vs URL (both must agree), then NamespaceLifecycle for creates."""
    meta = obj.setdefault("metadata", {})
    if not ep.resource.namespaced:
        meta.pop("namespace", None)
        return
    url_ns = ep.request_info.namespace
    body_ns = meta.get("namespace") or ""
    if body_ns and url_ns and body_ns != url_ns:
        raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the request")
    meta["namespace"] = url_ns or body_ns


def _namespace_lifecycle(ep: Endpoint, name: str) -> None:
    """Creating in a namespace needs it to exist and not be terminating (the NamespaceLifecycle plugin)."""
    if not ep.resource.namespaced:
        return
    namespace = ep.request_info.namespace
    ns = ep.server.namespaces.get(namespace)
    if ns is None:
        raise errors.not_found("namespaces", "", namespace)
    if ns.get("metadata", {}).get("deletionTimestamp") or ns.get("status", {}).get("phase") == "Terminating":
        err = errors.forbidden(
            ep.resource.resource, ep.resource.group, name,
            f"unable to create new content in namespace {namespace} because it is being terminated",
        )
        # Controllers tell this refusal from others by the cause (client-go's HasStatusCause).
        assert err.details is not None
        err.details["causes"] = [{"reason": "NamespaceTerminating", "field": "metadata.namespace",
                                  "message": f"namespace {namespace} is being terminated"}]
        raise err


def prune(ep: Endpoint, obj: dict[str, Any], query: Mapping[str, str], old: dict[str, Any] | None = None) -> list[str]:
    """Decode-time checks: wrong JSON types (400), then unknown fields per fieldValidation.

    `old`, on an update, spares the unknown-field walk what the write left as stored; only for
    built-in kinds (a CRD's schema may change under objects already stored)."""
    how = field_validation.directive(query)
    if ep.resource.builtin:
        type_check.check(obj, ep.resource.group, ep.resource.version, ep.resource.kind)
    unknown = field_validation.prune(obj, ep.resource.schema, old if ep.resource.builtin else None)
    return field_validation.report(unknown, how, ep.resource.kind, ep.resource.version)


def invalid(ep: Endpoint, obj: dict[str, Any], causes: list[dict[str, str]]) -> errors.APIError:
    name = (obj.get("metadata") or {}).get("name") or ""
    return errors.invalid(ep.resource.kind, ep.resource.group, name, causes)


def prepare_create(ep: Endpoint, obj: dict[str, Any], query: Mapping[str, str], user_agent: str,
                   *, strategy: Strategy | None = None, operation: str = "Update", user: Any = None) -> list[str]:
    """Turn a client's object into the one to store; returns the warnings to send.

    `user` is the request's `auth.User` (admission's `request.userInfo`); None means haru's admin."""
    strategy = strategy or ep.strategy
    bodies.check_kind(obj, ep.resource.api_version, ep.resource.kind)
    check_namespace(ep, obj)
    warnings = prune(ep, obj, query)
    meta = obj["metadata"]
    for key in _CLEARED_ON_CREATE:
        meta.pop(key, None)
    meta.pop("generation", None)
    # Defaults first: kube applies them when it decodes, before admission and any strategy hook.
    strategy.default(obj)
    shape = _go_shape(ep)
    _as_go_decodes(obj, shape)
    # managedFields describe the object as its writer sent it (defaults included): upstream's
    # handlers run the field manager here, so what admission and the strategy add is nobody's.
    meta.pop("managedFields", None)
    managed_fields.on_create(obj, managed_fields.manager_name(query, user_agent), ep.resource.schema,
                             operation=operation, track_status=_tracks_status(ep))
    recorded = meta.get("managedFields")
    _namespace_lifecycle(ep, meta.get("name") or meta.get("generateName") or "")
    escalation.check(ep, obj, None, user or ep.user)  # RBAC kinds: upstream checks before admission
    attrs = admitting.attributes(ep, admission_attributes.CREATE, obj, None, query, user=user or ep.user,
                                 name=meta.get("name") or "", dry_run=dry_run(query))
    _admit(ep, attrs, obj, strategy)
    meta = obj.setdefault("metadata", {})
    if not meta.get("name") and meta.get("generateName"):
        meta["name"] = generated_name(meta["generateName"])
    meta["uid"] = str(uuid.uuid4())
    meta["creationTimestamp"] = now()
    meta.pop("generation", None)
    warnings += strategy.create_warnings(obj)
    strategy.prepare_for_create(obj)
    causes = allocations.allocate(ep, obj, None) or strategy.validate(obj)
    if causes:
        raise invalid(ep, obj, causes)
    admitting.validate(ep, attrs)
    strategy.canonicalize(obj)
    warnings += strategy.warnings(obj) + attrs.warnings
    _keep(obj, recorded)
    _as_go_encodes(obj, shape)
    return warnings


def _admit(ep: Endpoint, attrs: Any, obj: dict[str, Any], strategy: Strategy) -> None:
    """Mutating admission on `obj` in place. A policy may hand back a new object: that one is
    defaulted again, as upstream decodes a webhook's patched object again."""
    admitting.admit(ep, attrs)
    if attrs.object is not obj:
        obj.clear()
        obj.update(attrs.object)
        attrs.object = obj
        strategy.default(obj)


def admit_delete(ep: Endpoint, current: dict[str, Any], *, dry_run: bool = False, user: Any = None) -> None:
    """Validating admission for a DELETE: `current` (the stored object) is the old object."""
    attrs = admitting.attributes(ep, admission_attributes.DELETE, None, current, {}, user=user or ep.user,
                                 name=(current.get("metadata") or {}).get("name", ""), dry_run=dry_run)
    if dry_run and attrs.options is not None:
        attrs.options["dryRun"] = ["All"]
    admitting.validate(ep, attrs)


def prepare_update(ep: Endpoint, new: dict[str, Any], old: dict[str, Any], query: Mapping[str, str],
                   user_agent: str, *, strategy: Strategy | None = None, subresource: str = "",
                   operation: str = "Update", user: Any = None) -> list[str]:
    """Check and complete `new` (the client's object) against `old` (the stored one)."""
    strategy = strategy or ep.strategy
    bodies.check_kind(new, ep.resource.api_version, ep.resource.kind)
    check_namespace(ep, new)
    warnings = prune(ep, new, query, old)
    meta, old_meta = new["metadata"], old["metadata"]
    # Server-owned metadata a client may leave out is carried over (rest.BeforeUpdate).
    # creationTimestamp is the server's; a client's copy may be formatted differently (+00:00).
    if old_meta.get("creationTimestamp"):
        meta["creationTimestamp"] = old_meta["creationTimestamp"]
    if not meta.get("uid") and old_meta.get("uid"):
        meta["uid"] = old_meta["uid"]
    for key in ("deletionTimestamp", "deletionGracePeriodSeconds"):
        if key in old_meta:
            meta[key] = old_meta[key]
        else:
            meta.pop(key, None)
    if "managedFields" not in meta and "managedFields" in old_meta:
        meta["managedFields"] = old_meta["managedFields"]
    meta.pop("generation", None)
    if "generation" in old_meta:
        meta["generation"] = old_meta["generation"]
    strategy.default(new)
    shape = _go_shape(ep)
    _as_go_decodes(new, shape)
    managed_fields.on_update(old, new, managed_fields.manager_name(query, user_agent), ep.resource.schema,
                             subresource, operation, track_status=_tracks_status(ep))  # as on create
    recorded = new["metadata"].get("managedFields")
    if not subresource:
        escalation.check(ep, new, old, user or ep.user)
    attrs = admitting.attributes(ep, admission_attributes.UPDATE, new, old, query, subresource=subresource,
                                 user=user or ep.user, dry_run=dry_run(query))
    _admit(ep, attrs, new, strategy)
    strategy.prepare_for_update(new, old)
    causes = (allocations.allocate(ep, new, old) if not subresource else []) or strategy.validate_update(new, old)
    if causes:
        raise invalid(ep, new, causes)
    admitting.validate(ep, attrs)
    strategy.canonicalize(new)
    warnings += strategy.warnings(new, old) + attrs.warnings
    _keep(new, recorded)
    _as_go_encodes(new, shape)
    return warnings


def _keep(obj: dict[str, Any], recorded: Any) -> None:
    """Put back the managedFields computed before admission and the strategy ran (a status write's
    strategy copies the stored metadata; admission may not rewrite ownership)."""
    meta = obj.setdefault("metadata", {})
    if recorded is None:
        meta.pop("managedFields", None)
    else:
        meta["managedFields"] = recorded


def _go_shape(ep: Endpoint) -> go_shape.Plan | None:
    """The Go encoding plan of a built-in kind; custom resources keep what their writers sent."""
    return go_shape.plan_for(ep.resource.api_version, ep.resource.kind) if ep.resource.builtin else None


def _as_go_decodes(obj: dict[str, Any], plan: go_shape.Plan | None) -> None:
    """Upstream decodes a write into its Go type, so what the field manager, admission and the
    store see has omitempty applied and Go's order: done once, before the field manager (an
    empty `labels: {}` owns nothing there, as ToUnstructured leaves it out)."""
    if plan is not None:
        go_shape.shape(obj, plan)


def _as_go_encodes(obj: dict[str, Any], plan: go_shape.Plan | None) -> None:
    """After admission and the strategy, what they set goes to its Go place. That is not only
    metadata and status: LimitRanger fills containers' resources, the Job strategy adds template
    labels, a policy may hand back a whole new object; so the whole pass again: it mostly confirms
    what the first did (each pass costs about 20 µs for a Pod, 2 µs for a ConfigMap:
    `python -m bench.go_shape`). This one also writes what Go's encoder writes for unset fields
    (a Deployment's `status: {}`); the field manager, which ran before, leaves those unowned
    either way."""
    if plan is not None:
        go_shape.shape(obj, plan, fill=True)


def _tracks_status(ep: Endpoint) -> bool:
    """Without a status subresource, status is written like any field and owned like one."""
    return "status" not in ep.resource.subresources


def expected_revision(obj: dict[str, Any]) -> int | None:
    """The resourceVersion a client sent as its precondition, if any."""
    rv = (obj.get("metadata") or {}).get("resourceVersion")
    if not rv:
        return None
    try:
        return int(rv)
    except (TypeError, ValueError):
        raise errors.bad_request(f'invalid resourceVersion "{rv}"') from None
