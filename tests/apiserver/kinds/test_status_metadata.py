"""What a write through /status may change of metadata, per kind (upstream's status PrepareForUpdate).

Most kinds reset only spec, so a Job's /status keeps the labels and annotations it is sent (the
Job conformance test "should apply changes to a job status" patches them); Deployments reset
labels, pods owner references, custom resources and ResourceClaims all writable metadata.
"""

from __future__ import annotations

import asyncio
from typing import Any

from kubernetes import client as pyclient

from tests.apiserver.kinds.writes import created, edited, messages, strategy, update


def job() -> dict[str, Any]:
    template = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "j", "namespace": "default", "labels": {"a": "1"}},
            "spec": {"template": template}}


def test_a_job_status_write_keeps_the_sent_labels_annotations_and_status_but_not_spec():
    old = created(strategy("batch", "jobs"), job())
    new = edited(old)
    new["metadata"]["labels"] = {"a": "1", "patched": "yes"}
    new["metadata"]["annotations"] = {"note": "status"}
    new["spec"]["parallelism"] = 9
    new["status"] = {"active": 1}

    assert update(strategy("batch", "jobs/status"), new, old) == []

    assert new["metadata"]["labels"] == {"a": "1", "patched": "yes"}
    assert new["metadata"]["annotations"] == {"note": "status"}
    assert new["spec"] == old["spec"] and new["status"] == {"active": 1}
    assert new["metadata"]["generation"] == old["metadata"]["generation"]


def test_a_job_status_write_that_leaves_annotations_out_removes_them_as_a_put_does():
    body = job()
    body["metadata"]["annotations"] = {"note": "old"}
    old = created(strategy("batch", "jobs"), body)
    new = edited(old)
    del new["metadata"]["annotations"]
    assert update(strategy("batch", "jobs/status"), new, old) == []
    assert "annotations" not in new["metadata"]


def test_bad_labels_sent_through_status_are_invalid_like_any_write():
    old = created(strategy("batch", "jobs"), job())
    new = edited(old)
    new["metadata"]["labels"] = {"bad key!": "x"}
    assert messages(update(strategy("batch", "jobs/status"), new, old))[0].startswith(
        'metadata.labels: Invalid value: "bad key!"')


def test_pods_status_keeps_labels_but_not_owner_references():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    old = created(strategy("", "pods"), pod)
    new = edited(old)
    new["metadata"]["labels"] = {"seen": "yes"}
    new["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ReplicationController", "name": "rc",
                                           "uid": "6f0b9b1e-0000-4000-8000-000000000000"}]
    assert update(strategy("", "pods/status"), new, old) == []
    assert new["metadata"]["labels"] == {"seen": "yes"} and "ownerReferences" not in new["metadata"]


def test_resource_claim_status_keeps_all_of_the_stored_metadata():
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "c", "namespace": "default", "labels": {"a": "1"}},
             "spec": {"devices": {"requests": []}}}
    old = created(strategy("resource.k8s.io", "resourceclaims"), claim)
    new = edited(old)
    new["metadata"]["labels"] = {"a": "2"}
    new["metadata"]["finalizers"] = ["example.com/keep"]
    update(strategy("resource.k8s.io", "resourceclaims/status"), new, old)
    assert new["metadata"]["labels"] == {"a": "1"} and "finalizers" not in new["metadata"]


def test_flowschema_status_keeps_the_stored_metadata_though_it_has_no_strategy_class():
    s = strategy("flowcontrol.apiserver.k8s.io", "flowschemas", namespaced=False)
    old = created(s, {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
                      "metadata": {"name": "fs"}, "spec": {"priorityLevelConfiguration": {"name": "x"}}})
    new = edited(old)
    new["metadata"]["annotations"] = {"a": "b"}
    update(strategy("flowcontrol.apiserver.k8s.io", "flowschemas/status", namespaced=False), new, old)
    assert "annotations" not in new["metadata"]


async def test_the_python_client_patches_a_job_status_with_an_annotation_and_reads_it_back(api: Any) -> None:
    batch = pyclient.BatchV1Api(pyclient.ApiClient(pyclient.Configuration(host=api.url)))
    # The server runs on this loop and the Python client blocks: the calls go to a thread.
    await asyncio.to_thread(batch.create_namespaced_job, "default", job())
    patch = {"metadata": {"annotations": {"patchedstatus": "true"}},
             "status": {"conditions": [{"type": "CustomConditionType", "status": "True",
                                        "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}
    patched = await asyncio.to_thread(batch.patch_namespaced_job_status, "j", "default", patch)
    assert patched.metadata.annotations == {"patchedstatus": "true"}
    assert [c.type for c in patched.status.conditions] == ["CustomConditionType"]

    patched.metadata.labels["team"] = "x"
    patched.spec.parallelism = 5
    updated = await asyncio.to_thread(batch.replace_namespaced_job_status, "j", "default", patched)
    assert updated.metadata.labels["team"] == "x" and updated.spec.parallelism == 1
    stored = await asyncio.to_thread(batch.read_namespaced_job_status, "j", "default")
    assert stored.metadata.annotations == {"patchedstatus": "true"} and stored.metadata.labels["team"] == "x"
