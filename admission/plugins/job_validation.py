"""The JobValidation plugin: a Job in a gang may not change its parallelism (KEP-5547, alpha 1.36).

Validating, UPDATE of batch/v1 jobs (not their status), while GenericWorkload or WorkloadWithJob is
on. When `spec.parallelism` changes, the Job's PodGroup decides: the one its template names in
`schedulingGroup`, else one the Job controls (`controllers/job_workload.py` makes those). A gang
there refuses it: 403 `jobs.batch "x" is forbidden: cannot change parallelism for a Job
referencing gang-scheduled PodGroup "y"`. Upstream: plugin/pkg/admission/job. See assembly.py.
"""

from __future__ import annotations

from typing import Any

import msgspec

from admission import errors
from admission.attributes import UPDATE, Attributes
from admission.view import ClusterView

_GROUP, _RESOURCE = "scheduling.k8s.io", "podgroups"


class JobValidationPlugin:
    name = "JobValidation"

    def __init__(self, view: ClusterView):
        self.view = view

    def validate(self, attrs: Attributes) -> None:
        if attrs.operation != UPDATE or attrs.subresource or (attrs.group, attrs.resource) != ("batch", "jobs"):
            return
        new, old = attrs.object or {}, attrs.old_object or {}
        if (new.get("spec") or {}).get("parallelism") == (old.get("spec") or {}).get("parallelism"):
            return
        group = self._gang_of(old, attrs.namespace)
        if group is not None:
            raise errors.forbidden(attrs, f'cannot change parallelism for a Job referencing gang-scheduled '
                                          f'PodGroup "{group}"')

    def _gang_of(self, job: dict[str, Any], namespace: str) -> str | None:
        """The name of a gang-scheduled PodGroup the Job uses, or None."""
        template = ((job.get("spec") or {}).get("template") or {}).get("spec") or {}
        named = template.get("schedulingGroup") or {}
        if named.get("podGroupName"):
            found = self.view.get(_GROUP, _RESOURCE, namespace, named["podGroupName"])
            return named["podGroupName"] if found is not None and _is_gang(found) else None
        uid = (job.get("metadata") or {}).get("uid")
        for stored in self.view.objects(_GROUP, _RESOURCE, namespace):
            group = msgspec.json.decode(stored.value)
            refs = (group.get("metadata") or {}).get("ownerReferences") or []
            if any(r.get("controller") and r.get("uid") == uid for r in refs) and _is_gang(group):
                return stored.name
        return None


def _is_gang(group: dict[str, Any]) -> bool:
    return "gang" in ((group.get("spec") or {}).get("schedulingPolicy") or {})
