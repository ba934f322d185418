"""The JobValidation plugin (plugin/pkg/admission/job, KEP-5547): a Job whose PodGroup is a gang
keeps its parallelism; everything else passes untouched."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from admission import errors
from admission.plugins.job_validation import JobValidationPlugin
from tests.admission.fakes import FakeView, attrs

UID = "job-uid"


def _job(parallelism: int, group: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox"}]}
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "namespace": "ml", "uid": UID},
            "spec": {"parallelism": parallelism, "completions": 4, "completionMode": "Indexed",
                     "template": {"spec": spec}}}


def _group(name: str, policy: dict[str, Any], owner: str | None = UID) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ml"}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": owner,
                                    "controller": True}]
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": meta,
            "spec": {"schedulingPolicy": policy}}


GANG, BASIC = {"gang": {"minCount": 4}}, {"basic": {}}
CASES = [
    ("a gang PodGroup the Job controls refuses the change", [_group("g", GANG)], None, "g"),
    ("a basic PodGroup the Job controls lets it pass", [_group("g", BASIC)], None, None),
    ("a gang PodGroup of another Job lets it pass", [_group("g", GANG, owner="other")], None, None),
    ("the gang the template names refuses the change", [_group("mine", GANG, owner=None)], "mine", "mine"),
    ("a named group that does not exist lets it pass", [], "missing", None),
    ("no PodGroup at all lets it pass", [], None, None),
]


@pytest.mark.parametrize("groups,named,refused", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_parallelism_changes(groups: list[dict[str, Any]], named: str | None, refused: str | None) -> None:
    view = FakeView()
    for group in groups:
        view.put("scheduling.k8s.io", "podgroups", copy.deepcopy(group))
    plugin = JobValidationPlugin(view)
    request = attrs(_job(2, named), old=_job(4, named), operation="UPDATE", group="batch", resource="jobs", kind="Job")
    if refused is None:
        plugin.validate(request)
        return
    with pytest.raises(errors.Rejection) as caught:
        plugin.validate(request)
    assert (caught.value.code, caught.value.reason) == (403, "Forbidden")
    assert caught.value.message == (f'jobs.batch "train" is forbidden: cannot change parallelism for a Job '
                                    f'referencing gang-scheduled PodGroup "{refused}"')


def test_other_changes_status_writes_and_creates_pass() -> None:
    view = FakeView()
    view.put("scheduling.k8s.io", "podgroups", _group("g", GANG))
    plugin = JobValidationPlugin(view)
    same = _job(4)
    plugin.validate(attrs(same, old=_job(4), operation="UPDATE", group="batch", resource="jobs", kind="Job"))
    plugin.validate(attrs(_job(2), old=_job(4), operation="UPDATE", group="batch", resource="jobs", kind="Job",
                          subresource="status"))
    plugin.validate(attrs(_job(2), operation="CREATE", group="batch", resource="jobs", kind="Job"))
