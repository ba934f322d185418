"""ValidatingAdmissionPolicy enforcement (test/e2e/apimachinery/validatingadmissionpolicy.go): a policy
bound to the check's namespace refuses Deployments its CEL validations reject and admits the rest.
(The variables test is left out: haru types a policy's variables as dyn when it validates the
policy, so `variables.x` as a whole validation is refused where upstream knows it is a bool.)"""

from __future__ import annotations

import itertools

from client import errors
from conformance.checks._confupstream_support import PAUSE
from conformance.context import Context, Obj
from conformance.registry import conformance

ADMISSION = "admissionregistration.k8s.io/v1"
_names = itertools.count(1)


def _deployment(replicas: int) -> Obj:
    labels = {"app": "vap-e2e"}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"vap-deploy-{next(_names)}"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "c", "image": PAUSE}]}}}}


async def _bind(ctx: Context, spec: Obj) -> str:
    name = f"e2e-vap-{ctx.namespace}"
    await ctx.create({"apiVersion": ADMISSION, "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name},
                      "spec": {"failurePolicy": "Fail", "matchConstraints": {"resourceRules": [{
                          "apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                          "resources": ["deployments"]}]}, **spec}})
    await ctx.create({"apiVersion": ADMISSION, "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": name},
                      "spec": {"policyName": name, "validationActions": ["Deny"], "matchResources": {
                          "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ctx.namespace}}}}})
    return name


async def _denied(ctx: Context, replicas: int, policy: str) -> errors.APIError:
    """Create a Deployment the policy rejects until the policy is in force; return the refusal."""
    async def refused() -> errors.APIError | None:
        try:
            created = await ctx.create(_deployment(replicas))
        except errors.APIError as err:
            if err.code in (403, 422) and f"ValidatingAdmissionPolicy '{policy}'" in err.message:
                return err
            raise
        await ctx.delete("apps/v1", "Deployment", created["metadata"]["name"])  # not in force yet
        return None
    return await ctx.eventually(refused, what=f"the policy {policy} to deny a Deployment of {replicas} replicas")


@conformance("[sig-api-machinery] ValidatingAdmissionPolicy [Privileged:ClusterAdmin] should validate against a "
             "Deployment [Conformance]", area="api-machinery")
async def vap_deployment(ctx: Context) -> None:
    policy = await _bind(ctx, {"validations": [
        {"expression": "object.spec.replicas > 1", "message": "must have more than 1 replicas"}]})
    err = await _denied(ctx, 1, policy)
    assert err.code == 422 and err.reason == "Invalid", f"a Deny without a reason is 422 Invalid: {err}"
    assert "must have more than 1 replicas" in err.message, f"the denial lacks the validation's message: {err}"
    admitted = await ctx.create(_deployment(2))
    assert admitted["spec"]["replicas"] == 2
