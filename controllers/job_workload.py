"""A gang-shaped Job's Workload and PodGroup (KEP-5547, gates GenericWorkload + WorkloadWithJob).

An Indexed Job with `completions == parallelism > 1` and no `schedulingGroup` in its template gets,
before its first pod, a Workload (owned by the Job, `controllerRef` to it, one template
`<job>-pgt-0`: a gang of minCount = parallelism) and a PodGroup from that template (owned by the
Job, and by the Workload without blocking its deletion), named as upstream names them. A Job that
already started never gets them late. `Groups.ensure` answers the PodGroup name its new pods
carry in `spec.schedulingGroup`; `job.py` calls it before creating pods.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from client import errors
from client.informer import Event
from client.resources import PODGROUPS, WORKLOADS
from client.rest import RestClient
from controllers import template_hash
from controllers.reconciling import Watch

Obj = dict[str, Any]
WORKLOAD_INDEX = "workload-by-job-name"
PODGROUP_INDEX = "podgroup-by-workload-name"
_NAME_MAX = 253  # DNS-1123 subdomain


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def candidate(job: Obj) -> bool:
    """upstream's IsGangSchedulingCandidate: Indexed, completions == parallelism > 1, no group set."""
    spec = job.get("spec") or {}
    parallelism, completions = spec.get("parallelism"), spec.get("completions")
    if spec.get("completionMode") != "Indexed" or parallelism is None or completions is None:
        return False
    if ((spec.get("template") or {}).get("spec") or {}).get("schedulingGroup") is not None:
        return False
    return int(parallelism) > 1 and int(parallelism) == int(completions)


def _hash(data: bytes) -> str:
    return template_hash.safe_encode(str(template_hash.fnv32a(data)))


def workload_name(job: Obj) -> str:
    # Upstream hashes spew's %#v of the types.UID value, which prints as (types.UID)"<uid>".
    suffix = _hash(f'(types.UID)"{_meta(job).get("uid") or ""}"'.encode())
    prefix = (_meta(job).get("name") or "")[:_NAME_MAX - len(suffix) - 1]
    return f"{prefix}-{suffix}"


def template_name(job: Obj) -> str:
    return f"{_meta(job).get('name')}-pgt-0"


def pod_group_name(workload: str, template: str) -> str:
    suffix = _hash(workload.encode() + template.encode())
    room = _NAME_MAX - len(suffix) - 2
    if len(workload) + len(template) > room:
        half = room // 2
        if len(workload) <= half:
            template = template[:room - len(workload)]
        elif len(template) <= half:
            workload = workload[:room - len(template)]
        else:
            workload, template = workload[:room - half], template[:half]
    return f"{workload}-{template}-{suffix}"


def _controller_ref(job: Obj) -> Obj:
    meta = _meta(job)
    return {"apiVersion": "batch/v1", "kind": "Job", "name": meta.get("name"), "uid": meta.get("uid"),
            "controller": True, "blockOwnerDeletion": True}


def new_workload(job: Obj) -> Obj:
    meta = _meta(job)
    parallelism = int((job.get("spec") or {}).get("parallelism") or 0)
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload",
        "metadata": {"name": workload_name(job), "namespace": meta.get("namespace"),
                     "ownerReferences": [_controller_ref(job)]},
        "spec": {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": meta.get("name")},
                 "podGroupTemplates": [{"name": template_name(job),
                                        "schedulingPolicy": {"gang": {"minCount": parallelism}}}]},
    }


def new_pod_group(job: Obj, workload: Obj) -> Obj:
    template = ((workload.get("spec") or {}).get("podGroupTemplates") or [{}])[0]
    wmeta = _meta(workload)
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
        "metadata": {
            "name": pod_group_name(wmeta.get("name") or "", template.get("name") or ""),
            "namespace": _meta(job).get("namespace"),
            # The Workload owns it too, without blocking the Workload's deletion.
            "ownerReferences": [_controller_ref(job), {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload",
                                                       "name": wmeta.get("name"), "uid": wmeta.get("uid")}],
        },
        "spec": {"podGroupTemplateRef": {"workload": {"workloadName": wmeta.get("name"),
                                                      "podGroupTemplateName": template.get("name")}},
                 "schedulingPolicy": template.get("schedulingPolicy") or {}},
    }


def is_new_job(job: Obj, pods: list[Obj]) -> bool:
    """upstream's isNewJob: no pods, never started, nothing counted, never suspended."""
    status = job.get("status") or {}
    if pods or status.get("startTime") or status.get("succeeded") or status.get("failed"):
        return False
    return not any(c.get("type") == "Suspended" for c in status.get("conditions") or [])


def controlled_by(obj: Obj, job: Obj) -> bool:
    uid = _meta(job).get("uid")
    return any(r.get("controller") and r.get("uid") == uid for r in _meta(obj).get("ownerReferences") or [])


def _workload_job(workload: Obj) -> list[str]:
    ref = (workload.get("spec") or {}).get("controllerRef") or {}
    if ref.get("apiGroup") != "batch" or ref.get("kind") != "Job" or not ref.get("name"):
        return []
    return [f"{_meta(workload).get('namespace')}/{ref['name']}"]


def _group_workload(group: Obj) -> list[str]:
    name = (((group.get("spec") or {}).get("podGroupTemplateRef") or {}).get("workload") or {}).get("workloadName")
    return [f"{_meta(group).get('namespace')}/{name}"] if name else []


def _owning_job_keys(event: Event) -> list[Hashable]:
    keys: list[Hashable] = []
    for obj in (event.obj, event.old):
        for ref in _meta(obj).get("ownerReferences") or [] if obj else []:
            if ref.get("controller") and ref.get("kind") == "Job":
                key = f"{_meta(obj).get('namespace')}/{ref.get('name')}"
                if key not in keys:
                    keys.append(key)
    return keys


class Groups:
    """The Job controller's view of Workloads and PodGroups, and the one call that makes them."""

    def __init__(self, client: RestClient) -> None:
        self.client = client
        self.workloads = Watch(WORKLOADS, _owning_job_keys, indexers={WORKLOAD_INDEX: _workload_job})
        self.pod_groups = Watch(PODGROUPS, _owning_job_keys, indexers={PODGROUP_INDEX: _group_workload})
        self.watches = [self.workloads, self.pod_groups]
        self._known: dict[str, tuple[str, str]] = {}  # Job key → (uid, its PodGroup's name), once made or found
        self._ctx: Any = None

    def prepare(self, ctx: Any) -> None:
        self._ctx = ctx

    def forget(self, job_key: str) -> None:
        """The Job ended or is gone: its group is not needed for new pods any more."""
        self._known.pop(job_key, None)

    def _indexed(self, watch: Watch, index: str, key: str) -> list[Obj]:
        informer = self._ctx.informer(watch) if self._ctx is not None else None
        return list(informer.store.by_index(index, key)) if informer is not None else []

    async def ensure(self, job: Obj, pods: list[Obj], event: Any) -> str | None:
        """The PodGroup name for the Job's new pods, making Workload then PodGroup; None: plain pods."""
        uid = _meta(job).get("uid") or ""
        namespace = _meta(job).get("namespace") or ""
        key = f"{namespace}/{_meta(job).get('name')}"
        known = self._known.get(key)
        if known is not None and known[0] == uid:
            return known[1]
        found = [w for w in self._indexed(self.workloads, WORKLOAD_INDEX, key) if controlled_by(w, job)]
        if len(found) > 1:
            return None  # ambiguous: upstream falls back to plain scheduling
        if found:
            workload = found[0]
        elif not is_new_job(job, pods):
            return None  # started before the gate: never given a group late
        else:
            workload = await self._create(WORKLOADS, new_workload(job), job)
            if workload is None:
                return None
            await event("Normal", "WorkloadCreated",
                        f"Created Workload {_meta(workload).get('name')} for Job {_meta(job).get('name')}")
        if len((workload.get("spec") or {}).get("podGroupTemplates") or []) != 1:
            return None
        wkey = f"{namespace}/{_meta(workload).get('name')}"
        groups = [g for g in self._indexed(self.pod_groups, PODGROUP_INDEX, wkey) if controlled_by(g, job)]
        if len(groups) > 1:
            return None
        group = groups[0] if groups else await self._create(PODGROUPS, new_pod_group(job, workload), job)
        if group is None:
            return None
        name = _meta(group).get("name") or ""
        self._known[key] = (uid, name)
        return name

    async def _create(self, resource: Any, body: Obj, job: Obj) -> Obj | None:
        """Create; when the name is taken (our cache is behind), the existing object if the Job controls it."""
        namespace = _meta(body).get("namespace")
        try:
            return await self.client.create(resource, body, namespace)
        except errors.APIError as exc:
            if not errors.is_already_exists(exc):
                raise
        existing = await self.client.get(resource, _meta(body).get("name") or "", namespace)
        return existing if controlled_by(existing, job) else None
