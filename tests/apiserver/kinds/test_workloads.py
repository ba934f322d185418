"""Deployments, ReplicaSets, StatefulSets, DaemonSets: defaults, selector rules, update rules."""

from __future__ import annotations

from typing import Any

import pytest

from tests.apiserver.kinds.writes import create, created, edited, messages, strategy, update


def template(labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"labels": labels if labels is not None else {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}


def workload(kind: str, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"selector": {"matchLabels": {"app": "web"}}, "template": template()}
    body.update(spec)
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "web", "namespace": "default"}, "spec": body}


RESOURCES = {"Deployment": "deployments", "ReplicaSet": "replicasets", "StatefulSet": "statefulsets", "DaemonSet": "daemonsets"}


def apps(kind: str):
    return strategy("apps", RESOURCES[kind])


def test_a_deployment_gets_replicas_rolling_update_history_and_deadline_defaults():
    spec = created(apps("Deployment"), workload("Deployment"))["spec"]
    assert (spec["replicas"], spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]) == (1, 10, 600)
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}


@pytest.mark.parametrize("kind", list(RESOURCES))
def test_every_workload_template_gets_pod_spec_defaults_but_not_pod_only_ones(kind):
    pod_spec = created(apps(kind), workload(kind))["spec"]["template"]["spec"]
    assert (pod_spec["restartPolicy"], pod_spec["dnsPolicy"], pod_spec["terminationGracePeriodSeconds"]) == ("Always", "ClusterFirst", 30)
    assert pod_spec["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    assert "enableServiceLinks" not in pod_spec and "tolerations" not in pod_spec and "serviceAccountName" not in pod_spec


@pytest.mark.parametrize("kind", list(RESOURCES))
def test_workloads_start_at_generation_one(kind):
    assert created(apps(kind), workload(kind))["metadata"]["generation"] == 1


def test_a_statefulset_gets_its_defaults_including_claim_template_ones():
    claim = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    spec = created(apps("StatefulSet"), workload("StatefulSet", serviceName="web", volumeClaimTemplates=[claim]))["spec"]
    assert (spec["podManagementPolicy"], spec["replicas"], spec["revisionHistoryLimit"]) == ("OrderedReady", 1, 10)
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    assert spec["volumeClaimTemplates"][0]["spec"]["volumeMode"] == "Filesystem"
    assert spec["volumeClaimTemplates"][0]["status"] == {"phase": "Pending"}


def test_a_daemonset_gets_rolling_update_defaults_and_template_generation_one():
    ds = created(apps("DaemonSet"), workload("DaemonSet"))
    assert ds["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    assert ds["metadata"]["annotations"] == {"deprecated.daemonset.template.generation": "1"}


@pytest.mark.parametrize("kind, spec, expected", [
    ("Deployment", {"selector": None}, "spec.selector: Required value"),
    ("Deployment", {"selector": {}}, "spec.selector: Invalid value: {}: empty selector is invalid for deployment"),
    ("ReplicaSet", {"selector": {}}, "spec.selector: Invalid value: {}: empty selector is invalid for deployment"),
    ("StatefulSet", {"selector": {}}, "spec.selector: Invalid value: {}: empty selector is invalid for statefulset"),
    ("DaemonSet", {"selector": {}}, "spec.selector: Invalid value: {}: empty selector is invalid for daemonset"),
    ("Deployment", {"template": template({"app": "other", "b": "1"})},
     'spec.template.metadata.labels: Invalid value: {"app":"other","b":"1"}: `selector` does not match template `labels`'),
    ("Deployment", {"replicas": -1}, "spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
    ("Deployment", {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}},
     "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0"),
    ("Deployment", {"progressDeadlineSeconds": 5, "minReadySeconds": 10},
     "spec.progressDeadlineSeconds: Invalid value: 5: must be greater than minReadySeconds"),
    ("StatefulSet", {"podManagementPolicy": "Random"},
     "spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'"),
], ids=["a selector is required", "an empty deployment selector", "replica sets reuse the deployment text",
        "an empty statefulset selector", "an empty daemonset selector", "template labels must match",
        "replicas are not negative", "maxUnavailable and maxSurge are not both zero",
        "the progress deadline exceeds minReadySeconds", "podManagementPolicy is one of two"])
def test_workload_validation(kind, spec, expected):
    body = workload(kind, **spec)
    if spec.get("selector", "") is None:
        body["spec"].pop("selector")
    assert expected in messages(create(apps(kind), body))


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"])
def test_a_template_restart_policy_other_than_always_is_rejected(kind):
    body = workload(kind)
    body["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    assert 'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"' in messages(create(apps(kind), body))


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet", "DaemonSet"])
def test_apps_v1_selectors_are_immutable(kind):
    s = apps(kind)
    old = created(s, workload(kind))
    new = edited(old)
    new["spec"]["selector"] = {"matchLabels": {"app": "web", "tier": "front"}}
    new["spec"]["template"]["metadata"]["labels"]["tier"] = "front"
    assert messages(update(s, new, old)) == [
        'spec.selector: Invalid value: {"matchLabels":{"app":"web","tier":"front"}}: field is immutable']


def test_a_statefulset_update_may_change_only_the_listed_fields():
    s = apps("StatefulSet")
    old = created(s, workload("StatefulSet", serviceName="web"))
    scaled, renamed = edited(old), edited(old)
    scaled["spec"]["replicas"] = 5
    renamed["spec"]["serviceName"] = "other"
    assert update(s, scaled, old) == []
    assert messages(update(s, renamed, edited(old))) == [
        "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
        "'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"]


def test_deployment_generation_counts_spec_and_annotation_changes_but_not_labels():
    s = apps("Deployment")
    old = created(s, workload("Deployment"))
    labelled, annotated, scaled = edited(old), edited(old), edited(old)
    labelled["metadata"]["labels"] = {"a": "b"}
    annotated["metadata"]["annotations"] = {"a": "b"}
    scaled["spec"]["replicas"] = 3
    generations = []
    for new in (labelled, annotated, scaled):
        assert update(s, new, old) == []
        generations.append(new["metadata"]["generation"])
    assert generations == [1, 2, 2]


def test_a_daemonset_template_change_bumps_the_template_generation():
    s = apps("DaemonSet")
    old = created(s, workload("DaemonSet"))
    new = edited(old)
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    assert update(s, new, old) == []
    assert new["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "2"
    assert new["metadata"]["generation"] == 2


def test_a_missing_selector_also_reports_the_template_mismatch_as_upstream_does():
    body = workload("Deployment")
    body["spec"].pop("selector")
    assert messages(create(apps("Deployment"), body)) == [
        "spec.selector: Required value",
        'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`']


def test_a_deployment_status_write_keeps_the_sent_annotations_and_nothing_else_of_the_object():
    old = created(apps("Deployment"), workload("Deployment"))
    old["metadata"]["labels"] = {"team": "web"}
    new = edited(old)
    new["metadata"]["annotations"] = {"deployment.kubernetes.io/revision": "1"}
    new["metadata"]["labels"] = {"team": "other"}
    new["spec"]["replicas"] = 7
    new["status"] = {"observedGeneration": 1, "replicas": 1}

    assert update(strategy("apps", "deployments/status"), new, old) == []

    assert new["metadata"]["annotations"] == {"deployment.kubernetes.io/revision": "1"}
    assert new["metadata"]["labels"] == {"team": "web"} and new["spec"]["replicas"] == 1
    assert new["metadata"]["generation"] == old["metadata"]["generation"] and new["status"]["replicas"] == 1


def test_a_statefulset_template_may_mount_its_claim_templates_but_nothing_else_missing():
    claim = {"metadata": {"name": "www"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    body = workload("StatefulSet", serviceName="web", volumeClaimTemplates=[claim])
    body["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] = [{"name": "www", "mountPath": "/data"}]
    assert create(apps("StatefulSet"), body) == []
    body["spec"]["template"]["spec"]["containers"][0]["volumeMounts"].append({"name": "nope", "mountPath": "/other"})
    assert messages(create(apps("StatefulSet"), body)) == ['spec.template.spec.containers[0].volumeMounts[1].name: Not found: "nope"']
