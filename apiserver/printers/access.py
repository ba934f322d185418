"""Printers for who-may-do-what kinds: RBAC bindings, certificates, admission, flow control.

Owns RoleBinding/ClusterRoleBinding, CertificateSigningRequest, ClusterTrustBundle,
PodCertificateRequest (its STATE and annotations cells are a best reading of a post-1.36 printer,
flagged uncertain in resources.md), Mutating/ValidatingWebhookConfiguration,
Mutating/ValidatingAdmissionPolicy(+Binding), FlowSchema (listed in matching-precedence order, as
upstream sorts them) and PriorityLevelConfiguration. Roles and ClusterRoles have no printer
upstream: they get the default table. Called through `apiserver/printers/__init__.py`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from apiserver.printers import cells
from apiserver.printers.printer import AGE, NAME, Doc, Printer, col


def subjects(binding: dict[str, Any]) -> tuple[str, str, str]:
    """Upstream `SubjectsStrings`: users, groups and `ns/name` service accounts, each ", "-joined."""
    users, groups, accounts = [], [], []
    for s in binding.get("subjects") or []:
        kind = s.get("kind")
        if kind == "ServiceAccount":
            accounts.append(f"{s.get('namespace', '')}/{s.get('name', '')}")
        elif kind == "User":
            users.append(s.get("name", ""))
        elif kind == "Group":
            groups.append(s.get("name", ""))
    return ", ".join(users), ", ".join(groups), ", ".join(accounts)


def _binding(obj: dict[str, Any], now: datetime) -> list[Any]:
    ref = obj.get("roleRef") or {}
    return [cells.name(obj), f"{ref.get('kind', '')}/{ref.get('name', '')}", cells.age(obj, now), *subjects(obj)]


def csr_condition(obj: dict[str, Any]) -> str:
    kinds = {c.get("type") for c in cells.dig(obj, "status", "conditions") or []}
    status = "Denied" if "Denied" in kinds else "Approved" if "Approved" in kinds else "Pending"
    if "Failed" in kinds:
        status += ",Failed"
    if cells.dig(obj, "status", "certificate"):
        status += ",Issued"
    return status


def _csr(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec = obj.get("spec") or {}
    seconds = spec.get("expirationSeconds")
    return [
        cells.name(obj), cells.age(obj, now), spec.get("signerName") or "<none>", spec.get("username", ""),
        "<none>" if seconds is None else cells.human_duration(cells.integer(seconds)), csr_condition(obj),
    ]


def _pod_certificate_request(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec = obj.get("spec") or {}
    state = "Pending"
    for c in cells.dig(obj, "status", "conditions") or []:
        if c.get("status") == "True" and c.get("type") in ("Issued", "Denied", "Failed"):
            state = c["type"]
            break
    return [
        cells.name(obj), spec.get("podName", ""), spec.get("serviceAccountName", ""), spec.get("nodeName", ""),
        spec.get("signerName", ""), state, cells.format_labels(spec.get("unverifiedUserAnnotations")),
    ]


def _param_kind(obj: dict[str, Any]) -> str:
    kind = cells.dig(obj, "spec", "paramKind")
    return "<unset>" if kind is None else f"{kind.get('apiVersion', '')}/{kind.get('kind', '')}"


def go_label_selector_string(selector: dict[str, Any]) -> str:
    """The generated Go `String()` of a `metav1.LabelSelector` (what upstream prints for paramRef)."""
    labels = "".join(f"{k}: {v}," for k, v in sorted((selector.get("matchLabels") or {}).items()))
    expressions = "".join(
        f"LabelSelectorRequirement{{Key:{e.get('key', '')},Operator:{e.get('operator', '')},"
        f"Values:[{' '.join(e.get('values') or [])}],}},"
        for e in selector.get("matchExpressions") or []
    )
    return f"&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}"


def _policy_binding(obj: dict[str, Any], now: datetime) -> list[Any]:
    ref = cells.dig(obj, "spec", "paramRef")
    param = "<unset>"
    if ref is not None:
        if ref.get("name"):
            # Whether the param is cluster-scoped is unknown here, so no namespace means "*".
            param = f"{ref.get('namespace') or '*'}/{ref['name']}"
        elif ref.get("selector") is not None:
            param = go_label_selector_string(ref["selector"])
    return [cells.name(obj), cells.dig(obj, "spec", "policyName") or "", param, cells.age(obj, now)]


def _flow_schema(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec = obj.get("spec") or {}
    method = cells.dig(spec, "distinguisherMethod", "type")
    dangling = cells.condition(cells.dig(obj, "status", "conditions"), "Dangling")
    return [
        cells.name(obj), cells.dig(spec, "priorityLevelConfiguration", "name") or "",
        cells.integer(spec.get("matchingPrecedence")), method or "<none>", cells.age(obj, now),
        "?" if dangling is None else dangling.get("status", ""),
    ]


def _flow_schema_order(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(items, key=lambda o: (cells.integer(cells.dig(o, "spec", "matchingPrecedence")), cells.name(o)))


def _priority_level(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec = obj.get("spec") or {}
    shares: Any = "<none>"
    queues: Any = "<none>"
    hand_size: Any = "<none>"
    queue_length: Any = "<none>"
    limited = spec.get("limited")
    if limited is not None:
        shares = cells.integer(limited.get("nominalConcurrencyShares"))
        queuing = cells.dig(limited, "limitResponse", "queuing")
        if queuing is not None:
            queues = cells.integer(queuing.get("queues"))
            hand_size = cells.integer(queuing.get("handSize"))
            queue_length = cells.integer(queuing.get("queueLengthLimit"))
    return [cells.name(obj), spec.get("type", ""), shares, queues, hand_size, queue_length, cells.age(obj, now)]


def _count_cells(field: str):
    def cells_of(obj: dict[str, Any], now: datetime) -> list[Any]:
        return [cells.name(obj), len(cells.dig(obj, *field.split(".")) or []), cells.age(obj, now)]
    return cells_of


def _policy(field: str):
    def cells_of(obj: dict[str, Any], now: datetime) -> list[Any]:
        return [cells.name(obj), len(cells.dig(obj, "spec", field) or []), _param_kind(obj), cells.age(obj, now)]
    return cells_of


def _binding_columns(kind: str):
    return (
        NAME, col("Role", Doc("rbac.v1." + kind[0].upper() + kind[1:], "roleRef")), AGE,
        col("Users", f"Users in the {kind}", priority=1), col("Groups", f"Groups in the {kind}", priority=1),
        col("ServiceAccounts", f"ServiceAccounts in the {kind}", priority=1),
    )


_WEBHOOKS = (NAME, col("Webhooks", "Webhooks indicates the number of webhooks registered in this configuration", type="integer"), AGE)
_PARAM_KIND = col("ParamKind", "ParamKind specifies the kind of resources used to parameterize this policy")
_POLICY_BINDING = (
    NAME, col("PolicyName", "PolicyName indicates the policy definition which the policy binding binded to"),
    col("ParamRef", "ParamRef indicates the param resource which sets the configration param"), AGE,
)
_VALIDATIONS = col("Validations", "Validations indicates the number of validation rules defined in this configuration", type="integer")
_MUTATIONS = col("Mutations", "Mutation indicates the number of mutations rules defined in this configuration", type="integer")
_ADMISSION = "admissionregistration.k8s.io"

PRINTERS = {
    ("rbac.authorization.k8s.io", "rolebindings"): Printer(_binding_columns("roleBinding"), _binding),
    ("rbac.authorization.k8s.io", "clusterrolebindings"): Printer(_binding_columns("clusterRoleBinding"), _binding),
    ("certificates.k8s.io", "certificatesigningrequests"): Printer(
        (NAME, AGE, col("SignerName", Doc("certificates.v1.CertificateSigningRequestSpec", "signerName")),
         col("Requestor", Doc("certificates.v1.CertificateSigningRequestSpec", "request")),
         col("RequestedDuration", Doc("certificates.v1.CertificateSigningRequestSpec", "expirationSeconds")),
         col("Condition", Doc("certificates.v1.CertificateSigningRequestStatus", "conditions"))),
        _csr,
    ),
    ("certificates.k8s.io", "clustertrustbundles"): Printer(
        (NAME, col("SignerName", Doc("certificates.v1beta1.ClusterTrustBundleSpec", "signerName"))),
        lambda o, now: [cells.name(o), cells.dig(o, "spec", "signerName") or "<none>"],
    ),
    ("certificates.k8s.io", "podcertificaterequests"): Printer(
        (NAME, col("PodName", Doc("certificates.v1beta1.PodCertificateRequestSpec", "podName")),
         col("ServiceAccountName", Doc("certificates.v1beta1.PodCertificateRequestSpec", "serviceAccountName")),
         col("NodeName", Doc("certificates.v1beta1.PodCertificateRequestSpec", "nodeName")),
         col("SignerName", Doc("certificates.v1beta1.PodCertificateRequestSpec", "signerName")),
         col("State", "The current state of the request."),
         col("UnverifiedUserAnnotations", Doc("certificates.v1beta1.PodCertificateRequestSpec", "unverifiedUserAnnotations"))),
        _pod_certificate_request,
    ),
    (_ADMISSION, "mutatingwebhookconfigurations"): Printer(_WEBHOOKS, _count_cells("webhooks")),
    (_ADMISSION, "validatingwebhookconfigurations"): Printer(_WEBHOOKS, _count_cells("webhooks")),
    (_ADMISSION, "validatingadmissionpolicies"): Printer((NAME, _VALIDATIONS, _PARAM_KIND, AGE), _policy("validations")),
    (_ADMISSION, "mutatingadmissionpolicies"): Printer((NAME, _MUTATIONS, _PARAM_KIND, AGE), _policy("mutations")),
    (_ADMISSION, "validatingadmissionpolicybindings"): Printer(_POLICY_BINDING, _policy_binding),
    (_ADMISSION, "mutatingadmissionpolicybindings"): Printer(_POLICY_BINDING, _policy_binding),
    ("flowcontrol.apiserver.k8s.io", "flowschemas"): Printer(
        (NAME, col("PriorityLevel", Doc("flowcontrol.v1.PriorityLevelConfigurationReference", "name")),
         col("MatchingPrecedence", Doc("flowcontrol.v1.FlowSchemaSpec", "matchingPrecedence")),
         col("DistinguisherMethod", Doc("flowcontrol.v1.FlowSchemaSpec", "distinguisherMethod")), AGE,
         col("MissingPL", "references a broken or non-existent PriorityLevelConfiguration")),
        _flow_schema,
        order=_flow_schema_order,
    ),
    ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"): Printer(
        (NAME, col("Type", Doc("flowcontrol.v1.PriorityLevelConfigurationSpec", "type")),
         col("NominalConcurrencyShares", Doc("flowcontrol.v1.LimitedPriorityLevelConfiguration", "nominalConcurrencyShares")),
         col("Queues", Doc("flowcontrol.v1.QueuingConfiguration", "queues")),
         col("HandSize", Doc("flowcontrol.v1.QueuingConfiguration", "handSize")),
         col("QueueLengthLimit", Doc("flowcontrol.v1.QueuingConfiguration", "queueLengthLimit")), AGE),
        _priority_level,
    ),
}
