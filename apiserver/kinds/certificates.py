"""CertificateSigningRequests: who asked, and who may approve, deny or issue.

Create: spec.username/uid/groups/extra come from the requesting user (`Strategy.requester`, set by
`app.py`), never from the body, and status starts empty: nobody creates a pre-approved request.
Update: spec and status come from the stored object. `/approval` changes only status.conditions
(Approved/Denied); `/status` changes everything in status but keeps the Approved/Denied conditions.
What is valid is `certificate_validation.py`'s. Upstream: pkg/registry/certificates.
"""

from __future__ import annotations

import copy
import time

from apiserver.kinds import certificate_validation
from apiserver.kinds.defaulting import DefaultingStrategy
from apiserver.strategy import Causes, Obj, Strategy

APPROVED, DENIED = certificate_validation.APPROVED, certificate_validation.DENIED


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class CertificateSigningRequestStrategy(DefaultingStrategy):
    counts_generation = False  # upstream's CSR strategies never set metadata.generation

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        spec = obj.setdefault("spec", {})
        for key in ("username", "uid", "groups", "extra"):
            spec.pop(key, None)
        user = self.requester
        if user is not None:
            spec["username"] = user.name
            if user.uid:
                spec["uid"] = user.uid
            if user.groups:
                spec["groups"] = list(user.groups)
            if user.extra:
                spec["extra"] = {k: list(values) for k, values in user.extra.items()}
        obj["status"] = {}

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)  # status from the stored object
        _keep_spec(new, old)

    def validate(self, obj: Obj) -> Causes:
        return certificate_validation.validate(obj, None)

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        return certificate_validation.validate_update(new, old)

    def status_strategy(self) -> Strategy:
        return CertificateSigningRequestStatusStrategy(self)

    def approval_strategy(self) -> Strategy:
        return CertificateSigningRequestApprovalStrategy(self)


class CertificateSigningRequestStatusStrategy(CertificateSigningRequestStrategy):
    """`/status` (the signer): the certificate and non-approval conditions; Approved/Denied stay."""

    def __init__(self, main: CertificateSigningRequestStrategy) -> None:
        super().__init__(namespaced=False, has_status=True, name_rule=main.name_rule)
        self.requester = main.requester

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        status = new.get("status")
        _keep_all_but_status(new, old)
        new["status"] = status if isinstance(status, dict) else {}
        # Old Approved/Denied instances replace the new ones where their counts agree; a changed
        # count is left for validation to refuse.
        for kind in (APPROVED, DENIED):
            _preserve_instances(new, old, kind)
        _stamp_conditions(new, old)

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        return certificate_validation.validate_update(new, old, allow_certificate=True)


class CertificateSigningRequestApprovalStrategy(CertificateSigningRequestStrategy):
    """`/approval` (kubectl certificate approve|deny): only status.conditions changes."""

    def __init__(self, main: CertificateSigningRequestStrategy) -> None:
        super().__init__(namespaced=False, has_status=True, name_rule=main.name_rule)
        self.requester = main.requester

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        _stamp_conditions(new, old)
        conditions = (new.get("status") or {}).get("conditions")
        _keep_all_but_status(new, old)
        status = copy.deepcopy(old.get("status") or {})
        if conditions:
            status["conditions"] = conditions
        else:
            status.pop("conditions", None)
        new["status"] = status

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        return certificate_validation.validate_update(new, old, allow_approval=True)


def _keep_spec(new: Obj, old: Obj) -> None:
    if "spec" in old:
        new["spec"] = copy.deepcopy(old["spec"])
    else:
        new.pop("spec", None)


def _keep_all_but_status(new: Obj, old: Obj) -> None:
    """Subresource writes take spec and metadata from the stored object (as `StatusStrategy`
    does), keeping only the client's resourceVersion, which is its precondition."""
    version = (new.get("metadata") or {}).get("resourceVersion")
    new.clear()
    new.update(copy.deepcopy({k: val for k, val in old.items() if k != "status"}))
    if version:
        new["metadata"]["resourceVersion"] = version


def _preserve_instances(new: Obj, old: Obj, kind: str) -> None:
    conditions = (new.get("status") or {}).get("conditions")
    if not isinstance(conditions, list):
        return
    old_ones = certificate_validation.of_type(old, kind)
    at = [i for i, c in enumerate(conditions) if isinstance(c, dict) and c.get("type") == kind]
    if len(at) == len(old_ones):
        for index, previous in zip(at, old_ones):
            conditions[index] = copy.deepcopy(previous)


def _stamp_conditions(new: Obj, old: Obj) -> None:
    """lastUpdateTime where missing; lastTransitionTime from an old condition of the same type and
    status, else now (upstream's populateConditionTimestamps)."""
    now = _now()
    for condition in (new.get("status") or {}).get("conditions") or []:
        if not isinstance(condition, dict):
            continue
        condition.setdefault("lastUpdateTime", now)
        if not condition.get("lastTransitionTime"):
            earlier = next((c.get("lastTransitionTime") for c in certificate_validation.conditions(old)
                            if c.get("type") == condition.get("type") and c.get("status") == condition.get("status")
                            and c.get("lastTransitionTime")), None)
            condition["lastTransitionTime"] = earlier or now
