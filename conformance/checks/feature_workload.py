"""Workload-aware scheduling of 1.36 (scheduling.k8s.io/v1alpha2): Workload and PodGroup objects
and gang scheduling (KEP-4671), topology-aware placement (KEP-5732), workload-aware preemption
(KEP-5710), Job → Workload (KEP-5547) and one DRA claim for a whole PodGroup (KEP-5729).
Pods ask little or no CPU, except where a check needs a group not to fit; only the preemption
check fills a node, so only it is serial."""

from __future__ import annotations

from typing import Any

from client import errors
from client.resources import JOBS, PODGROUPS, WORKLOADS
from conformance.checks import _conffeatures_support as s
from conformance.context import Context
from conformance.registry import feature

AREA = "scheduling"
V1ALPHA2 = "scheduling.k8s.io/v1alpha2"
GANG = ("GenericWorkload", "GangScheduling")
RACK = "topology.kubernetes.io/rack"


async def pod_group(ctx: Context, policy: dict[str, Any], name: str = "", **spec: Any) -> str:
    name = name or ctx.name("group")
    await s.make(ctx, {"apiVersion": V1ALPHA2, "kind": "PodGroup", "metadata": {"name": name},
                       "spec": {"schedulingPolicy": policy, **spec}})
    return name


async def member(ctx: Context, group: str, *, cpu: str = "", spec: dict[str, Any] | None = None,
                 labels: dict[str, str] | None = None, **options: Any) -> str:
    created = await s.pod(ctx, requests={"cpu": cpu} if cpu else None, labels=labels,
                          spec={"schedulingGroup": {"podGroupName": group}, **(spec or {})}, **options)
    return str(created["metadata"]["name"])


async def group_condition(ctx: Context, group: str, kind: str = "PodGroupScheduled") -> dict[str, Any] | None:
    found = await s.fetch(ctx, V1ALPHA2, "PodGroup", group)
    return next((c for c in (found.get("status") or {}).get("conditions") or [] if c.get("type") == kind), None)


async def none_bound(ctx: Context, pods: list[str]) -> bool:
    for name in pods:
        if (await s.get_pod(ctx, name))["spec"].get("nodeName"):
            return False
    return True


def spread_by_host(label: str) -> dict[str, Any]:
    """Pod anti-affinity: no two pods with `app=<label>` on one node."""
    return {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": label}}, "topologyKey": "kubernetes.io/hostname"}]}}}


async def node_labels(ctx: Context) -> dict[str, dict[str, str]]:
    return {n["metadata"]["name"]: n["metadata"].get("labels") or {} for n in await s.schedulable_nodes(ctx)}


# Gang scheduling ----------------------------------------------------------------------------------

@feature("[Feature:GangScheduling] a gang binds no pod until minCount pods exist, then binds them all and "
         "reports PodGroupScheduled", area=AREA, kep="KEP-4671", gates=GANG)
async def gang_waits_for_min_count(ctx: Context) -> None:
    group = await pod_group(ctx, {"gang": {"minCount": 3}})
    pods = [await member(ctx, group) for _ in range(2)]

    async def still_pending() -> bool:
        return await none_bound(ctx, pods)
    await s.stays(ctx, still_pending)
    pods.append(await member(ctx, group))
    for name in pods:
        await s.scheduled(ctx, name)

    async def scheduled_condition() -> bool:
        condition = await group_condition(ctx, group)
        return bool(condition and condition.get("status") == "True")
    await ctx.eventually(scheduled_condition, what="PodGroupScheduled=True on the PodGroup")


@feature("[Feature:GangScheduling] a gang that cannot place minCount pods binds none of them",
         area=AREA, kep="KEP-4671", gates=GANG)
async def gang_all_or_nothing(ctx: Context) -> None:
    labels = await node_labels(ctx)
    biggest = max([s.cores(node) for node in await s.schedulable_nodes(ctx)] or [0])
    if len(labels) < 2 or biggest < 2:
        ctx.skip("the check needs two schedulable nodes with CPU")
    # Each pod takes more than half of the biggest node, so at most one fits per node: one more pod
    # than there are nodes can never all be placed, while all but one could.
    cpu = str(biggest // 2 + 1)
    group = await pod_group(ctx, {"gang": {"minCount": len(labels) + 1}})
    pods = [await member(ctx, group, cpu=cpu) for _ in range(len(labels) + 1)]

    async def rejected() -> bool:
        condition = await group_condition(ctx, group)
        return bool(condition and condition.get("status") == "False" and condition.get("reason") == "Unschedulable")
    await ctx.eventually(rejected, what="PodGroupScheduled=False (Unschedulable) on the PodGroup")
    assert await none_bound(ctx, pods), "a gang that cannot be placed whole had pods bound"


@feature("[Feature:GenericWorkload] a pod whose PodGroup does not exist yet waits, and schedules once it is "
         "created", area=AREA, kep="KEP-4671", gates=("GenericWorkload",))
async def pod_waits_for_its_group(ctx: Context) -> None:
    group = ctx.name("later")
    name = await member(ctx, group)

    async def pending() -> bool:
        return await none_bound(ctx, [name])
    await s.stays(ctx, pending)
    await pod_group(ctx, {"basic": {}}, name=group)
    await s.scheduled(ctx, name)


@feature("[Feature:GenericWorkload] the pods of a basic PodGroup schedule one by one: what fits is bound",
         area=AREA, kep="KEP-4671", gates=("GenericWorkload",))
async def basic_group_schedules_what_fits(ctx: Context) -> None:
    group = await pod_group(ctx, {"basic": {}})
    small = [await member(ctx, group) for _ in range(2)]
    huge = await member(ctx, group, cpu="100000")
    for name in small:
        await s.scheduled(ctx, name)
    await s.unschedulable(ctx, huge)


@feature("[Feature:GenericWorkload] a Workload's podGroupTemplates are immutable",
         area=AREA, kep="KEP-4671", gates=("GenericWorkload",))
async def workload_templates_immutable(ctx: Context) -> None:
    body = {"apiVersion": V1ALPHA2, "kind": "Workload", "metadata": {"name": ctx.name("wl")},
            "spec": {"podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 2}}}]}}
    created = await s.make(ctx, body)
    created["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"] = 3
    await s.refused(ctx.api.update(WORKLOADS, created, ctx.namespace), 422, "Invalid", contains="immutable")


@feature("[Feature:GenericWorkload] a PodGroup's status is written only through /status and wiped on create",
         area=AREA, kep="KEP-4671", gates=("GenericWorkload",))
async def podgroup_status_subresource(ctx: Context) -> None:
    name = ctx.name("group")
    created = await s.make(ctx, {"apiVersion": V1ALPHA2, "kind": "PodGroup", "metadata": {"name": name},
                                 "spec": {"schedulingPolicy": {"basic": {}}},
                                 "status": {"conditions": [{"type": "PodGroupScheduled", "status": "True",
                                                            "reason": "Faked", "message": "",
                                                            "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})
    assert not (created.get("status") or {}).get("conditions"), f"status was kept on create: {created.get('status')}"
    condition = {"type": "Custom", "status": "True", "reason": "Set", "message": "",
                 "lastTransitionTime": "2026-01-01T00:00:00Z"}
    await ctx.api.patch(PODGROUPS, name, {"status": {"conditions": [condition]}}, ctx.namespace)
    found = await s.fetch(ctx, V1ALPHA2, "PodGroup", name)
    assert not (found.get("status") or {}).get("conditions"), "a main-resource patch changed the status"
    await ctx.api.patch(PODGROUPS, name, {"status": {"conditions": [condition]}}, ctx.namespace, subresource="status")
    found = await s.fetch(ctx, V1ALPHA2, "PodGroup", name)
    assert [c["type"] for c in found["status"]["conditions"]] == ["Custom"], found["status"]


# Topology-aware workload scheduling ---------------------------------------------------------------

@feature("[Feature:TopologyAwareWorkloadScheduling] all pods of a PodGroup with a topology constraint land in "
         "one domain", area=AREA, kep="KEP-5732", gates=GANG + ("TopologyAwareWorkloadScheduling",))
async def topology_one_domain(ctx: Context) -> None:
    labels = await node_labels(ctx)
    racks: dict[str, int] = {}
    for node_labels_ in labels.values():
        if RACK in node_labels_:
            racks[node_labels_[RACK]] = racks.get(node_labels_[RACK], 0) + 1
    if len(racks) < 2 or max(racks.values()) < 2:
        ctx.skip(f"the check needs two {RACK} domains, one with two nodes")
    group = await pod_group(ctx, {"gang": {"minCount": 2}}, schedulingConstraints={"topology": [{"key": RACK}]})
    app = ctx.name("tas")
    pods = [await member(ctx, group, labels={"app": app}, spec=spread_by_host(app)) for _ in range(2)]
    nodes = [(await s.scheduled(ctx, name))["spec"]["nodeName"] for name in pods]
    assert nodes[0] != nodes[1], "anti-affinity puts the two pods on two nodes"
    assert labels[nodes[0]].get(RACK) == labels[nodes[1]].get(RACK), \
        f"the group spans racks: {nodes} ({[labels[n].get(RACK) for n in nodes]})"


@feature("[Feature:TopologyAwareWorkloadScheduling] a gang that fits the cluster but no single domain is not "
         "scheduled", area=AREA, kep="KEP-5732", gates=GANG + ("TopologyAwareWorkloadScheduling",))
async def topology_no_domain_fits(ctx: Context) -> None:
    labels = await node_labels(ctx)
    per_rack: dict[str, int] = {}
    for node_labels_ in labels.values():
        if RACK in node_labels_:
            per_rack[node_labels_[RACK]] = per_rack.get(node_labels_[RACK], 0) + 1
    if len(per_rack) < 2:
        ctx.skip(f"the check needs nodes in two {RACK} domains")
    size = max(per_rack.values()) + 1  # one pod per node: no rack holds them, the cluster does
    if size > len(labels):
        ctx.skip("the cluster has too few nodes for the check")
    group = await pod_group(ctx, {"gang": {"minCount": size}}, schedulingConstraints={"topology": [{"key": RACK}]})
    app = ctx.name("tas")
    pods = [await member(ctx, group, labels={"app": app}, spec=spread_by_host(app)) for _ in range(size)]

    async def rejected() -> bool:
        condition = await group_condition(ctx, group)
        return bool(condition and condition.get("status") == "False")
    await ctx.eventually(rejected, what="PodGroupScheduled=False on the PodGroup")
    assert await none_bound(ctx, pods), "pods of a group that fits no rack were bound"


# Workload-aware preemption ------------------------------------------------------------------------

@feature("[Feature:WorkloadAwarePreemption] a PodGroup takes its priority from priorityClassName and defaults "
         "disruptionMode to Pod", area=AREA, kep="KEP-5710", gates=("GenericWorkload", "WorkloadAwarePreemption"))
async def podgroup_priority_class(ctx: Context) -> None:
    pc = f"{ctx.namespace}-high"
    await ctx.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": pc},
                      "value": 4242})
    name = await pod_group(ctx, {"gang": {"minCount": 1}}, priorityClassName=pc)
    found = await s.fetch(ctx, V1ALPHA2, "PodGroup", name)
    assert found["spec"].get("priority") == 4242, f"priority from {pc}: {found['spec']}"
    assert found["spec"].get("disruptionMode") == "Pod", f"disruptionMode default: {found['spec']}"
    await s.refused(pod_group(ctx, {"gang": {"minCount": 1}}, priorityClassName=f"{ctx.namespace}-missing"),
                    403, "Forbidden", contains="no PriorityClass")


@feature("[Feature:WorkloadAwarePreemption] disruptionMode PodGroup is refused for a basic group",
         area=AREA, kep="KEP-5710", gates=("GenericWorkload", "WorkloadAwarePreemption"))
async def disruption_mode_needs_gang(ctx: Context) -> None:
    await s.refused(pod_group(ctx, {"basic": {}}, disruptionMode="PodGroup"), 422, "Invalid",
                    contains="disruptionMode")


@feature("[Feature:WorkloadAwarePreemption] a higher-priority pod preempts a PodGroup with disruptionMode "
         "PodGroup as a whole", area=AREA, kep="KEP-5710", serial=True,
         gates=("GenericWorkload", "GangScheduling", "WorkloadAwarePreemption"))
async def preempt_whole_group(ctx: Context) -> None:
    nodes = await s.schedulable_nodes(ctx)
    node = min(nodes, key=s.cores)
    node_name = node["metadata"]["name"]
    cores = s.cores(node)
    if cores < 4:
        ctx.skip("the check needs a node with 4 CPUs")
    low, high = f"{ctx.namespace}-low", f"{ctx.namespace}-high"
    for pc, value in ((low, 10), (high, 100000)):
        await ctx.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": pc},
                          "value": value})
    here = {"nodeSelector": {"kubernetes.io/hostname": node_name}}
    half = f"{cores * 1000 // 2 - 200}m"  # two of them fill the node, whatever else small runs there
    group = await pod_group(ctx, {"gang": {"minCount": 2}}, disruptionMode="PodGroup", priorityClassName=low)
    victims = [await member(ctx, group, cpu=half, spec=dict(here, priorityClassName=low)) for _ in range(2)]
    for name in victims:
        await s.scheduled(ctx, name)
    # The preemptor needs only one victim's room, but the group goes as a whole.
    preemptor = await s.pod(ctx, requests={"cpu": half}, spec=dict(here, priorityClassName=high))

    async def all_gone() -> bool:
        for name in victims:
            try:
                found = await s.get_pod(ctx, name)
            except errors.APIError as err:
                if errors.is_not_found(err):
                    continue
                raise
            if not found["metadata"].get("deletionTimestamp"):
                return False
        return True
    await ctx.eventually(all_gone, timeout=45, what="both pods of the PodGroup to be preempted")
    bound = await s.scheduled(ctx, preemptor["metadata"]["name"], timeout=45)
    assert bound["spec"]["nodeName"] == node_name


# Job → Workload -----------------------------------------------------------------------------------

def job_body(name: str, *, indexed: bool, parallelism: int, completions: int) -> dict[str, Any]:
    spec: dict[str, Any] = {"parallelism": parallelism, "completions": completions, "template": {"spec": {
        "restartPolicy": "Never", "terminationGracePeriodSeconds": 0,
        "containers": [{"name": "c", "image": "busybox", "command": ["sh", "-c", "exit 0"]}]}}}
    if indexed:
        spec["completionMode"] = "Indexed"
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": spec}


async def job_groups(ctx: Context) -> list[dict[str, Any]]:
    return (await ctx.api.list(PODGROUPS, ctx.namespace))["items"]


@feature("[Feature:WorkloadWithJob] an Indexed Job with completions == parallelism gets a gang Workload and "
         "PodGroup its pods join, and completes", area=AREA, kep="KEP-5547",
         gates=("GenericWorkload", "GangScheduling", "WorkloadWithJob"))
async def job_gets_workload(ctx: Context) -> None:
    name = ctx.name("gang")
    await ctx.create(job_body(name, indexed=True, parallelism=2, completions=2))

    async def workload() -> dict[str, Any] | None:
        items = (await ctx.api.list(WORKLOADS, ctx.namespace))["items"]
        return items[0] if items else None
    found = await ctx.eventually(workload, what="the Job controller to create a Workload")
    assert found["spec"].get("controllerRef") == {"apiGroup": "batch", "kind": "Job", "name": name}, found["spec"]
    [template] = found["spec"]["podGroupTemplates"]
    assert template["schedulingPolicy"] == {"gang": {"minCount": 2}}, template
    groups = await ctx.eventually(lambda: job_groups(ctx), what="a PodGroup for the Job")
    group = groups[0]["metadata"]["name"]

    async def complete() -> bool:
        job = await ctx.get("batch/v1", "Job", name)
        return any(c.get("type") == "Complete" and c.get("status") == "True"
                   for c in (job.get("status") or {}).get("conditions") or [])
    await ctx.eventually(complete, timeout=45, what="the Job to complete")
    pods = (await ctx.list("v1", "Pod", label_selector=f"batch.kubernetes.io/job-name={name}"))["items"]
    assert pods and all((p["spec"].get("schedulingGroup") or {}).get("podGroupName") == group for p in pods), \
        [p["spec"].get("schedulingGroup") for p in pods]


@feature("[Feature:WorkloadWithJob] a Job outside the gang shape (not Indexed) gets no Workload",
         area=AREA, kep="KEP-5547", gates=("GenericWorkload", "GangScheduling", "WorkloadWithJob"))
async def plain_job_no_workload(ctx: Context) -> None:
    name = ctx.name("plain")
    await ctx.create(job_body(name, indexed=False, parallelism=2, completions=2))

    async def pods_exist() -> list[dict[str, Any]]:
        return (await ctx.list("v1", "Pod", label_selector=f"batch.kubernetes.io/job-name={name}"))["items"]
    pods = await ctx.eventually(pods_exist, what="the Job's pods")
    assert not (await ctx.api.list(WORKLOADS, ctx.namespace))["items"], "a NonIndexed Job got a Workload"
    assert all(not p["spec"].get("schedulingGroup") for p in pods), "pods of a plain Job joined a group"


@feature("[Feature:WorkloadWithJob] parallelism of a Job gang-scheduled through its Workload cannot change",
         area=AREA, kep="KEP-5547", gates=("GenericWorkload", "GangScheduling", "WorkloadWithJob"))
async def job_parallelism_fixed(ctx: Context) -> None:
    name = ctx.name("gang")
    body = job_body(name, indexed=True, parallelism=2, completions=2)
    body["spec"]["template"]["spec"]["containers"][0]["command"] = ["sleep", "3600"]
    await ctx.create(body)
    await ctx.eventually(lambda: job_groups(ctx), what="a PodGroup for the Job")
    await ctx.eventually(lambda: _job_pods_grouped(ctx, name), what="the Job's pods to join the PodGroup")
    await s.refused(ctx.api.patch(JOBS, name, {"spec": {"parallelism": 1}}, ctx.namespace), 403, "Forbidden",
                    contains="parallelism")


async def _job_pods_grouped(ctx: Context, job: str) -> bool:
    pods = (await ctx.list("v1", "Pod", label_selector=f"batch.kubernetes.io/job-name={job}"))["items"]
    return bool(pods) and all(p["spec"].get("schedulingGroup") for p in pods)


# One claim per PodGroup ---------------------------------------------------------------------------

@feature("[Feature:DRAWorkloadResourceClaims] a PodGroup's claim template makes one claim reserved for the "
         "group, shared by its pods", area="dra", kep="KEP-5729",
         gates=("GenericWorkload", "DRAWorkloadResourceClaims"))
async def podgroup_shared_claim(ctx: Context) -> None:
    node = await s.a_node(ctx)
    await s.own_slice(ctx, node, [{"name": "a"}, {"name": "b"}])
    cls = await s.own_class(ctx)
    template = ctx.name("tmpl")
    await ctx.create({"apiVersion": s.RESOURCE_V1, "kind": "ResourceClaimTemplate", "metadata": {"name": template},
                      "spec": {"spec": {"devices": {"requests": [s.exactly("d", cls)]}}}})
    entry = {"name": "shared", "resourceClaimTemplateName": template}
    group = await pod_group(ctx, {"basic": {}}, resourceClaims=[entry])
    pods = [await member(ctx, group, templates={"shared": template}) for _ in range(2)]
    nodes = {(await s.scheduled(ctx, name))["spec"]["nodeName"] for name in pods}
    assert nodes == {node}, f"both pods go where the group's device is ({node}): {nodes}"

    async def claim_status() -> str | None:
        found = await s.fetch(ctx, V1ALPHA2, "PodGroup", group)
        statuses = (found.get("status") or {}).get("resourceClaimStatuses") or []
        return next((st.get("resourceClaimName") for st in statuses if st.get("name") == "shared"), None)
    claim_name = await ctx.eventually(claim_status, what="the PodGroup's resourceClaimStatuses")
    claim = await s.allocated(ctx, claim_name)
    group_obj = await s.fetch(ctx, V1ALPHA2, "PodGroup", group)
    assert [(r.get("resource"), r.get("uid")) for r in claim["status"].get("reservedFor") or []] == \
        [("podgroups", group_obj["metadata"]["uid"])], f"reservedFor: {claim['status'].get('reservedFor')}"
    for name in pods:
        statuses = (await s.get_pod(ctx, name))["status"].get("resourceClaimStatuses") or []
        assert [st.get("resourceClaimName") for st in statuses] == [claim_name], statuses
