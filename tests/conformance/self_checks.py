"""Test-only checks for the suite's self-tests, each of a behaviour one `haru up` flag switches off.

The registry's own feature and scheduling checks come from other modules (merged separately), so
the self-tests bring the two they need, written like any check: a DRAPrioritizedList allocation
(off with `--feature-gates=DRAPrioritizedList=false`) and a NoSchedule taint the scheduler honours
(off with TaintToleration disabled in `--scheduler-config`). The Deployment checks of the registry
cover the third switch (`--controllers=*,-deployment`). Each passes on a default `haru up`
(test_suite_on_haru.py) and fails with its switch off (test_self_tests.py).
"""

from __future__ import annotations

from conformance.context import Context
from conformance.registry import CONFORMANCE, FEATURE, Check

TAINT_KEY = "conformance.haru.dev/self-test"


async def prioritized_list(ctx: Context) -> None:
    cls = ctx.name("self-test-gpu")
    await ctx.create({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": cls},
                      "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.nvidia.com"'}}]}})
    claim = ctx.name("claim")
    await ctx.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": claim},
                      "spec": {"devices": {"requests": [{"name": "gpu", "firstAvailable": [
                          {"name": "too-many", "deviceClassName": cls, "allocationMode": "ExactCount", "count": 1000},
                          {"name": "one", "deviceClassName": cls, "allocationMode": "ExactCount", "count": 1}]}]}}})
    await ctx.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gpu-user"}, "spec": {
        "terminationGracePeriodSeconds": 0, "resourceClaims": [{"name": "gpu", "resourceClaimName": claim}],
        "containers": [{"name": "c", "image": "registry.k8s.io/e2e-test-images/agnhost:2.53",
                        "resources": {"claims": [{"name": "gpu"}]}}]}})

    async def allocated() -> bool:
        found = await ctx.get("resource.k8s.io/v1", "ResourceClaim", claim)
        results = ((found.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results") or []
        assert [r.get("request") for r in results] == ["gpu/one"], f"allocation results {results}"
        return True
    await ctx.eventually(allocated, timeout=15, what="the claim allocated from its second subrequest")


async def taint_respected(ctx: Context) -> None:
    nodes = (await ctx.list("v1", "Node"))["items"]
    untainted = [n for n in nodes if not (n.get("spec") or {}).get("taints")]
    assert untainted, "no untainted node to taint"
    node = untainted[0]["metadata"]["name"]
    await ctx.patch("v1", "Node", node, {"spec": {"taints": [{"key": TAINT_KEY, "value": "x", "effect": "NoSchedule"}]}})

    async def untaint() -> None:
        await ctx.patch("v1", "Node", node, {"spec": {"taints": None}})
    ctx.defer(untaint)
    await ctx.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "intolerant"}, "spec": {
        "terminationGracePeriodSeconds": 0, "nodeSelector": {"kubernetes.io/hostname": node},
        "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}})

    async def unschedulable() -> bool:
        pod = await ctx.get("v1", "Pod", "intolerant")
        if pod["spec"].get("nodeName"):
            raise RuntimeError(f"the pod was bound to {pod['spec']['nodeName']}, whose NoSchedule taint it does not tolerate")
        conditions = (pod.get("status") or {}).get("conditions") or []
        assert any(c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable" for c in conditions), \
            f"no PodScheduled=False Unschedulable yet: {conditions}"
        return True
    await ctx.eventually(unschedulable, timeout=15, what="the pod reported Unschedulable")


PRIORITIZED_LIST = Check("[Feature:DRAPrioritizedList] a claim is allocated from its first feasible subrequest",
                         "dra", FEATURE, prioritized_list, kep="KEP-4816", gates=("DRAPrioritizedList",), timeout=20,
                         module=__name__)
TAINT = Check("[self-test] a pod that does not tolerate a node's NoSchedule taint is not scheduled there [Conformance]",
              "scheduling", CONFORMANCE, taint_respected, serial=True, timeout=20, module=__name__)
ALL = [PRIORITIZED_LIST, TAINT]
