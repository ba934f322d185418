"""The param objects a binding hands its policy (generic.CollectParams upstream).

No paramKind, or a binding without paramRef: one evaluation with `params` null. Otherwise the
object named by paramRef.name, or every object paramRef.selector selects, in paramRef.namespace
(default: the request's namespace) when the param kind is namespaced. None found: with
parameterNotFoundAction Deny an error, with Allow no evaluation at all. Errors are
`ParamError`s whose text is upstream's; the dispatcher reports them as
"failed to configure binding: …" under the policy's failurePolicy.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec

from admission.policy import matching
from admission.view import ClusterView


class ParamError(Exception):
    pass


def _param_kind_text(param_kind: dict[str, Any]) -> str:
    # The generated String() of v1.ParamKind, which upstream prints in this message.
    return f"&ParamKind{{APIVersion:{param_kind.get('apiVersion', '')},Kind:{param_kind.get('kind', '')},}}"


def _with_type_meta(obj: dict[str, Any], param_kind: dict[str, Any]) -> dict[str, Any]:
    if obj.get("apiVersion") and obj.get("kind"):
        return obj
    return {**obj, "apiVersion": param_kind.get("apiVersion", ""), "kind": param_kind.get("kind", "")}


def collect(param_kind: dict[str, Any] | None, param_ref: dict[str, Any] | None, request_namespace: str,
            view: ClusterView) -> list[dict[str, Any] | None]:
    if param_kind is None or param_ref is None:
        return [None]
    ref = view.resource_for_kind(param_kind.get("apiVersion", ""), param_kind.get("kind", ""))
    if ref is None:
        raise ParamError(f"paramKind kind `{_param_kind_text(param_kind)}` not known")
    namespace = ""
    if ref.namespaced:
        namespace = param_ref.get("namespace") or request_namespace
        if not namespace:
            raise ParamError("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")
    elif param_ref.get("namespace"):
        raise ParamError("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")
    params: list[dict[str, Any] | None] = []
    if param_ref.get("name"):
        if param_ref.get("selector") is not None:
            raise ParamError("paramRef.name and paramRef.selector are mutually exclusive")
        found = view.get(ref.group, ref.resource, namespace, param_ref["name"])
        if found is not None:
            params.append(_with_type_meta(found, param_kind))
    elif param_ref.get("selector") is not None:
        for stored in view.objects(ref.group, ref.resource, namespace if ref.namespaced else None):
            obj = msgspec.json.decode(stored.value)
            if matching.selector_matches(param_ref["selector"], (obj.get("metadata") or {}).get("labels") or {}):
                params.append(_with_type_meta(obj, param_kind))
    else:
        raise ParamError("one of name or selector must be provided")
    if not params and param_ref.get("parameterNotFoundAction") == "Deny":
        raise ParamError("no params found for policy binding with `Deny` parameterNotFoundAction")
    return params


def bound(hook: Any, attrs: Any, namespace_labels: Any, view: ClusterView
          ) -> Iterator[tuple[dict[str, Any], list[dict[str, Any] | None], str | None]]:
    """Each binding of `hook` whose matchResources match the request, with its params — or, when
    its paramRef cannot be resolved, no params and the reason (each plugin reports it its own way)."""
    policy = hook.policy
    for binding in hook.bindings:
        spec = binding.get("spec") or {}
        if matching.matches(spec.get("matchResources"), attrs, namespace_labels, view,
                            is_binding=True, memo=hook.memo(binding)) is None:
            continue
        try:
            found = collect(policy.param_kind, spec.get("paramRef"), attrs.namespace, view)
        except ParamError as err:
            yield binding, [], str(err)
            continue
        yield binding, found, None
