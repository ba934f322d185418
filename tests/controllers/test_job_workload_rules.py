"""Which Jobs the Job controller gives a Workload and PodGroup, and the names it picks (upstream's
IsGangSchedulingCandidate, computeWorkloadName and computePodGroupName in pkg/controller/job)."""

from __future__ import annotations

from typing import Any

import pytest

from controllers import job_workload


def _job(name: str, **spec: Any) -> dict[str, Any]:
    container = {"name": "main", "image": "busybox"}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"template": {"spec": {"containers": [container], "restartPolicy": "Never"}}, **spec}}


CANDIDATES = [
    ("an Indexed Job with completions == parallelism > 1 is a gang", {"completionMode": "Indexed", "completions": 4,
                                                                    "parallelism": 4}, True),
    ("parallelism 1 is not", {"completionMode": "Indexed", "completions": 1, "parallelism": 1}, False),
    ("a NonIndexed Job is not", {"completionMode": "NonIndexed", "completions": 4, "parallelism": 4}, False),
    ("completions above parallelism is not", {"completionMode": "Indexed", "completions": 8, "parallelism": 4}, False),
    ("no completions is not", {"completionMode": "Indexed", "parallelism": 4}, False),
]


@pytest.mark.parametrize("spec,want", [(s, w) for _, s, w in CANDIDATES], ids=[n for n, _, _ in CANDIDATES])
def test_which_jobs_are_gang_candidates(spec: dict[str, Any], want: bool) -> None:
    assert job_workload.candidate(_job("j", **spec)) is want


def test_a_template_that_names_its_own_group_is_left_alone() -> None:
    job = _job("j", completionMode="Indexed", completions=2, parallelism=2)
    job["spec"]["template"]["spec"]["schedulingGroup"] = {"podGroupName": "mine"}
    assert job_workload.candidate(job) is False


def test_names_follow_upstreams_patterns_and_fit_a_dns_subdomain() -> None:
    job = {"metadata": {"name": "train", "uid": "1b4f0c2e-0000-4000-8000-000000000001"}}
    name = job_workload.workload_name(job)
    assert name.startswith("train-") and name == job_workload.workload_name(job)
    assert name != job_workload.workload_name({"metadata": {"name": "train", "uid": "another"}})
    group = job_workload.pod_group_name(name, "train-pgt-0")
    assert group.startswith(f"{name}-train-pgt-0-")
    long = job_workload.pod_group_name("w" * 200, "t" * 200)
    assert len(long) == 253 and long.startswith("w" * 121 + "-" + "t" * 120 + "-")
    assert len(job_workload.workload_name({"metadata": {"name": "j" * 253, "uid": "u"}})) == 253
