"""How an object goes away: DeleteOptions, preconditions, grace periods and finalizers.

kube's rules (registry/generic/registry/store.go): an object with finalizers — its own or the
`foregroundDeletion`/`orphan` ones a propagationPolicy adds — is only marked (deletionTimestamp,
deletionGracePeriodSeconds 0) and stays until an update removes the last finalizer; a pod bound to
a node is marked with its grace period and left for its kubelet; anything else is removed at once.
What a finished DELETE answers (the object or a Success Status) is `delete_answers.py`'s table;
an object only marked answers itself, with 202 when the client asked `orphanDependents: false`
(endpoints/handlers/delete.go). Called by `handlers/delete.py` (DELETE, DeleteCollection) and by
the update paths (`finish_if_finalized`), so that removing the last finalizer deletes the object.
"""

from __future__ import annotations

import time
from datetime import datetime
from dataclasses import dataclass
from typing import Any, Mapping

import msgspec

from apiserver import bodies, delete_answers, errors, responses, writing
from apiserver.context import Endpoint
from apiserver import query_flags
from storage import Record, errors as storage_errors

_POLICIES = ("Foreground", "Background", "Orphan")
_POLICY_FINALIZERS = {"Foreground": "foregroundDeletion", "Orphan": "orphan"}


@dataclass
class DeleteOptions:
    grace_period: int | None = None
    policy: str | None = None
    dry_run: bool = False
    uid: str | None = None
    resource_version: str | None = None
    orphan_dependents: bool | None = None  # as sent (deprecated field); False asks for 202 while pending


def options(body: dict[str, Any], query: Mapping[str, str]) -> DeleteOptions:
    opts = DeleteOptions()
    grace = query.get("gracePeriodSeconds") or body.get("gracePeriodSeconds")
    if grace not in (None, ""):
        try:
            opts.grace_period = int(grace)
        except (TypeError, ValueError):
            raise errors.bad_request(f'invalid value for gracePeriodSeconds: "{grace}"') from None
    policy = query.get("propagationPolicy") or body.get("propagationPolicy")
    orphan = body.get("orphanDependents")
    if query_flags.flag(query, "orphanDependents") is not None:
        orphan = query_flags.flag(query, "orphanDependents")
    if policy and orphan is not None:
        raise _invalid_options("propagationPolicy", policy,
                               "orphanDependents and deletionPropagation cannot be both set")
    if policy and policy not in _POLICIES:
        raise _invalid_options("propagationPolicy", policy,
                               'supported values: "Foreground", "Background", "Orphan"', unsupported=True)
    opts.policy = policy or ("Orphan" if orphan else ("Background" if orphan is False else None))
    opts.orphan_dependents = orphan if isinstance(orphan, bool) else None
    dry = [v for v in (query.getall("dryRun", []) if hasattr(query, "getall") else [])] + list(body.get("dryRun") or [])
    opts.dry_run = writing.check_dry_run([v for v in dry if v])
    pre = body.get("preconditions") or {}
    opts.uid = pre.get("uid")
    opts.resource_version = pre.get("resourceVersion")
    return opts


def _invalid_options(field: str, value: str, detail: str, unsupported: bool = False) -> errors.APIError:
    text = f'Unsupported value: "{value}": {detail}' if unsupported else f'Invalid value: "{value}": {detail}'
    cause = errors.field_error("FieldValueNotSupported" if unsupported else "FieldValueInvalid", field, text)
    return errors.invalid("DeleteOptions", "meta.k8s.io", "", [cause])


async def read_options(request: Any) -> DeleteOptions:
    raw = await bodies.read(request) if request.can_read_body else b""
    body: dict[str, Any] = {}
    if raw.strip():
        body = bodies.decode_object(bodies.media_type(request), raw)
    return options(body, request.query)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _graceful_pod(ep: Endpoint, obj: dict[str, Any], opts: DeleteOptions) -> int | None:
    """The grace period a pod gets on its node, or None when it goes at once (kube's pod strategy).

    A pod already being deleted keeps its deadline unless this DELETE shortens it (`_shorten`)."""
    if (ep.resource.group, ep.resource.resource) != ("", "pods"):
        return None
    if obj["metadata"].get("deletionTimestamp"):
        return _shorten(obj, opts)
    spec = obj.get("spec") or {}
    grace = opts.grace_period if opts.grace_period is not None else spec.get("terminationGracePeriodSeconds", 30)
    phase = (obj.get("status") or {}).get("phase")
    if not spec.get("nodeName") or phase in ("Succeeded", "Failed") or grace <= 0:
        return None
    return grace


def _shorten(obj: dict[str, Any], opts: DeleteOptions) -> int | None:
    """A second DELETE of a pod in its grace period (rest.BeforeDelete's "already being deleted").

    A stored grace period of 0 (or none) means the pod goes now: None. Only a shorter grace period
    changes anything: the deadline moves by the difference and the new period is kept (the kubelet's
    final DELETE with 0 leaves 0, so removing the last finalizer later deletes the pod); 0 → None,
    as for a pod deleted at once. Otherwise the deletion is pending: `_Pending`, nothing written."""
    meta = obj["metadata"]
    stored = meta.get("deletionGracePeriodSeconds")
    if not stored:
        return None
    period = opts.grace_period
    if period is None or period >= stored:
        raise _Pending(obj)
    deadline = _parse_time(meta["deletionTimestamp"]) - stored + period
    meta["deletionTimestamp"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(deadline))
    meta["deletionGracePeriodSeconds"] = period
    return period or None


def _parse_time(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()  # RFC 3339, `Z` or an offset, seconds or finer


def _mark_as_deleting(meta: dict[str, Any]) -> None:
    """Upstream markAsDeleting: an object finalizers hold is due now (never later), grace period 0."""
    now = _now()
    if not meta.get("deletionTimestamp") or _parse_time(meta["deletionTimestamp"]) > _parse_time(now):
        meta["deletionTimestamp"] = now
    meta["deletionGracePeriodSeconds"] = 0


async def delete(ep: Endpoint, name: str, opts: DeleteOptions) -> tuple[dict[str, Any], bool]:
    """Delete or mark `name`; returns (object as it ends up, whether it is gone). A gone object of a
    resource whose DELETE answers a Status (`result_body`) comes back as it was read before the
    delete, resourceVersion included: that answer names it by name and uid only."""
    key = ep.key(name)
    gone = False

    def mark(current: dict[str, Any] | None) -> dict[str, Any]:
        nonlocal gone
        if current is None:
            raise ep.not_found(name)
        check_preconditions(ep, name, current, opts)
        writing.admit_delete(ep, current, dry_run=opts.dry_run)  # validating admission sees DELETE
        grace = _graceful_pod(ep, current, opts)  # first: a pending deletion takes no new finalizers
        meta = current["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        wanted = _POLICY_FINALIZERS.get(opts.policy or "")
        for extra in _POLICY_FINALIZERS.values():
            if opts.policy and extra != wanted and extra in finalizers:
                finalizers.remove(extra)  # the newest policy wins, as upstream
        if wanted and wanted not in finalizers:
            finalizers.append(wanted)
        namespace_pending = ep.resource.resource == "namespaces" and not ep.resource.group and \
            (current.get("spec") or {}).get("finalizers")
        if not finalizers and grace is None and not namespace_pending:
            gone = True
            raise _DeleteNow(current)
        if finalizers:
            meta["finalizers"] = finalizers
        if grace is None:
            _mark_as_deleting(meta)
        elif not meta.get("deletionTimestamp"):
            meta["deletionTimestamp"] = _later(grace)
            meta["deletionGracePeriodSeconds"] = grace
        if namespace_pending:
            current.setdefault("status", {})["phase"] = "Terminating"
        if opts.dry_run:
            raise _DryRunMark(current)
        return current

    try:
        record = await ep.server.store.guaranteed_update(key, mark)
        return msgspec.json.decode(record.value), False
    except (_DryRunMark, _Pending) as result:
        return result.obj, False
    except _DeleteNow as now_:
        if opts.dry_run:
            return now_.obj, True
        rv = now_.obj["metadata"].get("resourceVersion")
        try:
            record = await ep.server.store.delete(key, expected_revision=int(rv) if rv else None)
        except storage_errors.Conflict:
            return await delete(ep, name, opts)  # changed under us: decide again on the new state
        except storage_errors.StorageError as exc:
            raise errors.from_storage(exc, ep.resource.resource, ep.resource.group, name) from None
        assert gone
        if not delete_answers.returns_object(ep.resource):
            return now_.obj, True  # decoding what was deleted would be thrown away
        return msgspec.json.decode(record.value), True
    except storage_errors.StorageError as exc:
        raise errors.from_storage(exc, ep.resource.resource, ep.resource.group, name) from None


def _later(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + seconds))


class _DeleteNow(Exception):
    def __init__(self, obj: dict[str, Any]) -> None:
        self.obj = obj


class _Pending(Exception):
    """A pod's graceful deletion is under way and this DELETE changes nothing: answer it as it is."""

    def __init__(self, obj: dict[str, Any]) -> None:
        self.obj = obj


class _DryRunMark(Exception):
    def __init__(self, obj: dict[str, Any]) -> None:
        self.obj = obj


def check_preconditions(ep: Endpoint, name: str, obj: dict[str, Any], opts: DeleteOptions) -> None:
    meta = obj["metadata"]
    if opts.uid and opts.uid != meta.get("uid"):
        raise errors.conflict(ep.resource.resource, ep.resource.group, name,
                              f"Precondition failed: UID in precondition: {opts.uid}, UID in object meta: {meta.get('uid')}")
    if opts.resource_version and opts.resource_version != meta.get("resourceVersion"):
        raise errors.conflict(
            ep.resource.resource, ep.resource.group, name,
            f"Precondition failed: ResourceVersion in precondition: {opts.resource_version}, "
            f"ResourceVersion in object meta: {meta.get('resourceVersion')}",
        )


def status_code(opts: DeleteOptions, gone: bool) -> int:
    """200, or 202 Accepted for an object left pending when the client sent `orphanDependents: false`.

    Upstream would answer 202 for every pending deletion but keeps 200 for old clients' sake."""
    return 202 if not gone and opts.orphan_dependents is False else 200


def result_body(ep: Endpoint, obj: dict[str, Any]) -> dict[str, Any]:
    """What a finished DELETE answers: the object where the store returns it, else a Success Status."""
    if delete_answers.returns_object(ep.resource):
        return obj
    details: dict[str, Any] = {"name": obj["metadata"].get("name", "")}
    if ep.resource.group:
        details["group"] = ep.resource.group
    details["kind"] = ep.resource.resource
    details["uid"] = obj["metadata"].get("uid", "")
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}


async def finish_if_finalized(ep: Endpoint, record: Record) -> Record | None:
    """After an update: an object marked for deletion whose last finalizer is gone is deleted now."""
    obj = responses.decode(record.value)
    meta = obj.get("metadata") or {}
    if not meta.get("deletionTimestamp") or meta.get("finalizers") or meta.get("deletionGracePeriodSeconds", 0) != 0:
        return None
    if ep.resource.resource == "namespaces" and not ep.resource.group and (obj.get("spec") or {}).get("finalizers"):
        return None
    try:
        return await ep.server.store.delete(record.key, expected_revision=record.revision)
    except (storage_errors.Conflict, storage_errors.KeyNotFound):
        return None  # someone else changed or removed it; their write decides
