"""Kubernetes `authz` library: `authorizer.path/group/serviceAccount(...)…check(verb)` and Decision.

The chain mirrors k8s.io/apiserver/pkg/cel/library/authz.go, selectors included
(`fieldSelector`, `labelSelector`). haru has no RBAC yet, so the default decider ALLOWS EVERY
CHECK FOR EVERYONE (reason ""); an `Environment(authorize=...)` hook replaces it once RBAC
exists. The principal travels inside the `Authorizer` value (`for_user`), so one compiled
program serves every request. Registered through `admission.cel.library.function_decls`.
"""

from __future__ import annotations

from typing import Any, Callable

from cel_expr_python import cel

from admission.cel.library import spec
from admission.cel import kube_types as kt

T = cel.Type

# (attributes) -> (decision, reason); decision is "allow", "deny" or "no opinion".
Decider = Callable[[dict[str, Any]], tuple[str, str]]


def allow_everyone(attributes: dict[str, Any]) -> tuple[str, str]:
    """The decider until RBAC exists: every check is allowed."""
    return "allow", ""


def for_user(user: str, groups: list[str] | tuple[str, ...] = (), uid: str = "") -> object:
    """The `authorizer` variable's value for a request made by `user`."""
    return kt.Authorizer(user=user, groups=list(groups), uid=uid)


def request_resource(authorizer: object, *, group: str, resource: str, subresource: str = "",
                     namespace: str = "", name: str = "") -> object:
    """The `authorizer.requestResource` variable's value: a check on the request's own resource."""
    return kt.ResourceCheck(authorizer=authorizer, group=group, resource=resource,
                            subresource=subresource, namespace=namespace, name=name)


def _service_account(authorizer: object, namespace: str, name: str) -> object:
    return kt.Authorizer(
        user=f"system:serviceaccount:{namespace}:{name}",
        groups=["system:serviceaccounts", f"system:serviceaccounts:{namespace}",
                "system:authenticated"],
    )


def _with(check: object, **changes: str) -> object:
    copy = type(check)()
    copy.CopyFrom(check)
    for field, value in changes.items():
        setattr(copy, field, value)
    return copy


def _principal(authorizer: object) -> dict[str, Any]:
    return {"user": authorizer.user, "groups": list(authorizer.groups),  # type: ignore[attr-defined]
            "uid": authorizer.uid}  # type: ignore[attr-defined]


def overloads(decide: Decider) -> list[tuple[str, spec.Spec]]:
    def decision(attributes: dict[str, Any]) -> object:
        verdict, reason = decide(attributes)
        return kt.Decision(decision=verdict, reason=reason)

    def check_path(check: Any, verb: str) -> object:
        return decision({**_principal(check.authorizer), "verb": verb, "path": check.path})

    def check_resource(check: Any, verb: str) -> object:
        return decision({
            **_principal(check.authorizer), "verb": verb, "group": check.group,
            "resource": check.resource, "subresource": check.subresource,
            "namespace": check.namespace, "name": check.name,
            "fieldSelector": check.field_selector, "labelSelector": check.label_selector,
        })

    def member(name: str, overload: str, result: T, params: list[T], impl: object) -> tuple:
        return name, spec.overload(overload, result, params, is_member=True, impl=impl)

    rc, dec = kt.RESOURCE_CHECK, kt.DECISION
    return [
        member("path", "authorizer_path", kt.PATH_CHECK, [kt.AUTHORIZER, T.STRING],
               lambda a, path: kt.PathCheck(authorizer=a, path=path)),
        member("group", "authorizer_group", kt.GROUP_CHECK, [kt.AUTHORIZER, T.STRING],
               lambda a, group: kt.GroupCheck(authorizer=a, group=group)),
        member("serviceAccount", "authorizer_serviceaccount", kt.AUTHORIZER,
               [kt.AUTHORIZER, T.STRING, T.STRING], _service_account),
        member("resource", "groupcheck_resource", rc, [kt.GROUP_CHECK, T.STRING],
               lambda g, resource: kt.ResourceCheck(authorizer=g.authorizer, group=g.group,
                                                    resource=resource)),
        member("subresource", "resourcecheck_subresource", rc, [rc, T.STRING],
               lambda c, v: _with(c, subresource=v)),
        member("namespace", "resourcecheck_namespace", rc, [rc, T.STRING],
               lambda c, v: _with(c, namespace=v)),
        member("name", "resourcecheck_name", rc, [rc, T.STRING], lambda c, v: _with(c, name=v)),
        member("fieldSelector", "resourcecheck_fieldselector", rc, [rc, T.STRING],
               lambda c, v: _with(c, field_selector=v)),
        member("labelSelector", "resourcecheck_labelselector", rc, [rc, T.STRING],
               lambda c, v: _with(c, label_selector=v)),
        member("check", "pathcheck_check", dec, [kt.PATH_CHECK, T.STRING], check_path),
        member("check", "resourcecheck_check", dec, [rc, T.STRING], check_resource),
        member("allowed", "decision_allowed", T.BOOL, [dec], lambda d: d.decision == "allow"),
        member("reason", "decision_reason", T.STRING, [dec], lambda d: d.reason),
        member("errored", "decision_errored", T.BOOL, [dec], lambda d: bool(d.error)),
        member("error", "decision_error", T.STRING, [dec], lambda d: d.error),
    ]
