"""Pods: 1.36 defaults, admission defaults, status on create, validation and the update rule."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.kinds import pod_qos, pod_update, podspec_defaults
from tests.apiserver.kinds.writes import create, created, edited, messages, strategy, update


def a_pod(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": [{"name": "app", "image": "nginx:1.27"}]}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"}, "spec": body}


def pods():
    return strategy("", "pods")


def test_a_bare_pod_gets_every_upstream_default():
    pod = created(pods(), a_pod())
    spec = pod["spec"]
    assert {k: spec[k] for k in ("restartPolicy", "dnsPolicy", "schedulerName", "terminationGracePeriodSeconds",
                                 "securityContext", "enableServiceLinks", "serviceAccountName", "serviceAccount",
                                 "priority", "preemptionPolicy")} == {
        "restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler",
        "terminationGracePeriodSeconds": 30, "securityContext": {}, "enableServiceLinks": True,
        "serviceAccountName": "default", "serviceAccount": "default", "priority": 0,
        "preemptionPolicy": "PreemptLowerPriority",
    }
    assert spec["containers"][0] == {
        "name": "app", "image": "nginx:1.27", "imagePullPolicy": "IfNotPresent", "resources": {},
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
    }
    assert spec["tolerations"] == [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    ]
    assert pod["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    assert pod["metadata"]["generation"] == 1


@pytest.mark.parametrize("image, policy", [
    ("nginx", "Always"),
    ("nginx:latest", "Always"),
    ("nginx:1.27", "IfNotPresent"),
    ("registry.local:5000/team/app", "Always"),
    ("registry.local:5000/team/app:v2", "IfNotPresent"),
    ("nginx@sha256:" + "a" * 64, "IfNotPresent"),
    ("nginx:latest@sha256:" + "a" * 64, "Always"),
], ids=lambda value: str(value)[:40])
def test_image_pull_policy_follows_the_tag(image, policy):
    container = {"name": "c", "image": image}
    podspec_defaults.container(container)
    assert container["imagePullPolicy"] == policy


def test_ports_get_tcp_and_probes_get_their_thresholds():
    pod = created(pods(), a_pod(containers=[{
        "name": "app", "image": "nginx", "ports": [{"containerPort": 80}],
        "readinessProbe": {"httpGet": {"port": 80}},
    }]))
    container = pod["spec"]["containers"][0]
    assert container["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert container["readinessProbe"] == {"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
                                           "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}


def test_a_pod_that_tolerates_not_ready_only_gets_the_unreachable_toleration():
    own = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}
    pod = created(pods(), a_pod(tolerations=[own]))
    assert [t["key"] for t in pod["spec"]["tolerations"]] == ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]
    assert pod["spec"]["tolerations"][0]["tolerationSeconds"] == 60


def test_a_named_service_account_is_kept_and_mirrored():
    pod = created(pods(), a_pod(serviceAccount="builder"))
    assert (pod["spec"]["serviceAccountName"], pod["spec"]["serviceAccount"]) == ("builder", "builder")


@pytest.mark.parametrize("resources, qos", [
    ([{}], "BestEffort"),
    ([{"requests": {"cpu": "100m"}}], "Burstable"),
    ([{"limits": {"cpu": "1", "memory": "1Gi"}}], "Guaranteed"),
    ([{"requests": {"cpu": "1000m", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1024Mi"}}], "Guaranteed"),
    ([{"limits": {"cpu": "1", "memory": "1Gi"}}, {}], "Burstable"),
    ([{"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}], "BestEffort"),
    ([{"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}], "Burstable"),
], ids=["no resources is best effort", "a request alone is burstable", "limits alone default requests: guaranteed",
        "equal quantities in other units are guaranteed", "one container without limits makes it burstable",
        "extended resources do not count", "requests below limits are burstable"])
def test_qos_class_on_create(resources, qos):
    containers = [{"name": f"c{i}", "image": "nginx", "resources": r} for i, r in enumerate(resources)]
    pod = created(pods(), a_pod(containers=containers))
    assert pod["status"]["qosClass"] == qos
    assert pod_qos.compute(pod["spec"]) == qos


def test_a_gated_pod_starts_with_the_scheduling_gated_condition():
    pod = created(pods(), a_pod(schedulingGates=[{"name": "example.com/wait"}]))
    condition = pod["status"]["conditions"][0]
    assert (condition["type"], condition["status"], condition["reason"]) == ("PodScheduled", "False", "SchedulingGated")


@pytest.mark.parametrize("spec, expected", [
    ({"containers": []}, ["spec.containers: Required value"]),
    ({"containers": [{"name": "app", "image": "a"}, {"name": "app", "image": "b"}]},
     ['spec.containers[1].name: Duplicate value: "app"']),
    ({"containers": [{"name": "App", "image": "a"}]},
     ['spec.containers[0].name: Invalid value: "App": a lowercase RFC 1123 label must consist of lower case '
      "alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
      "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]),
    ({"containers": [{"name": "app"}]}, ["spec.containers[0].image: Required value"]),
    ({"restartPolicy": "Sometimes"},
     ['spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"']),
    ({"hostUsers": False, "hostNetwork": True, "containers": [{"name": "app", "image": "a"}]},
     ["spec.hostNetwork: Forbidden: when `pod.Spec.HostUsers` is false"]),
    ({"hostUsers": False, "hostPID": True, "hostIPC": True},
     ["spec.HostPID: Forbidden: when `pod.Spec.HostUsers` is false",
      "spec.HostIPC: Forbidden: when `pod.Spec.HostUsers` is false"]),
    ({"hostUsers": True, "hostPID": True}, []),
    ({"ephemeralContainers": [{"name": "dbg", "image": "busybox"}]},
     ["spec.ephemeralContainers: Forbidden: cannot be set on create"]),
    ({"nodeName": "n1", "schedulingGates": [{"name": "g"}]},
     ["spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"]),
    ({"containers": [{"name": "app", "image": "a", "ports": [{"containerPort": 70000}]}]},
     ["spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"]),
    ({"containers": [{"name": "app", "image": "a", "volumeMounts": [{"name": "data", "mountPath": "/d"}]}]},
     ['spec.containers[0].volumeMounts[0].name: Not found: "data"']),
    ({"tolerations": [{"key": "k", "operator": "Exists", "value": "v"}]},
     ["spec.tolerations[0].operator: Invalid value: \"v\": value must be empty when `operator` is 'Exists'"]),
], ids=["containers are required", "container names are unique", "container names are DNS labels",
        "an image is required", "restartPolicy is an enum", "hostUsers false forbids hostNetwork while its gate is off",
        "hostUsers false forbids hostPID and hostIPC with upstream's capitalised paths",
        "hostUsers true allows host namespaces", "ephemeral containers only through the subresource",
        "a gated pod may not name a node", "container ports are in range", "mounts name a volume",
        "an Exists toleration has no value"])
def test_pod_validation(spec, expected):
    assert messages(create(_userns_strategy(False), a_pod(**spec))) == expected


def test_a_pod_name_must_be_a_dns_subdomain():
    pod = a_pod()
    pod["metadata"]["name"] = "Web"
    assert [c["field"] for c in create(pods(), pod)] == ["metadata.name"]


@pytest.mark.parametrize("change, allowed", [
    (lambda s: s["containers"][0].update(image="nginx:1.28"), True),
    (lambda s: s.update(activeDeadlineSeconds=30), True),
    (lambda s: s["tolerations"].append({"key": "k", "operator": "Exists", "effect": "NoSchedule"}), True),
    (lambda s: s["tolerations"][0].update(tolerationSeconds=10), True),
    (lambda s: s.update(schedulingGates=[]), True),
    (lambda s: s["containers"][0].update(env=[{"name": "A", "value": "1"}]), False),
    (lambda s: s.update(restartPolicy="Never"), False),
    (lambda s: s.update(serviceAccountName="other", serviceAccount="other"), False),
], ids=["a new image", "a first activeDeadlineSeconds", "an added toleration", "new tolerationSeconds",
        "removed scheduling gates", "a new env var", "a new restartPolicy", "another service account"])
def test_what_a_pod_update_may_change(change, allowed):
    s = pods()
    old = created(s, a_pod(schedulingGates=[{"name": "g"}]))
    new = edited(old)
    change(new["spec"])
    causes = update(s, new, old)
    if allowed:
        assert causes == []
    else:
        assert [c["field"] for c in causes] == ["spec"]
        assert causes[0]["reason"] == "FieldValueForbidden"
        assert causes[0]["message"].startswith(f"Forbidden: {pod_update.FORBIDDEN_PREFIX}\n")


def test_the_forbidden_update_message_is_upstreams_sentence():
    assert pod_update.FORBIDDEN_PREFIX == (
        "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,"
        "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),"
        "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)")


@pytest.mark.parametrize("old_deadline, new_deadline, expected", [
    (60, 30, []),
    (30, 60, ["spec.activeDeadlineSeconds: Invalid value: 60: must be less than or equal to previous value"]),
    (30, None, ["spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive integer to nil value"]),
], ids=["lowering the deadline is allowed", "raising it is not", "removing it is not"])
def test_active_deadline_updates(old_deadline, new_deadline, expected):
    s = pods()
    old = created(s, a_pod(activeDeadlineSeconds=old_deadline))
    new = edited(old)
    new["spec"].pop("activeDeadlineSeconds")
    if new_deadline is not None:
        new["spec"]["activeDeadlineSeconds"] = new_deadline
    assert messages(update(s, new, old)) == expected


def test_changing_an_existing_toleration_is_forbidden():
    s = pods()
    old = created(s, a_pod())
    new = edited(old)
    new["spec"]["tolerations"][0]["effect"] = "NoSchedule"
    assert "spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds" \
        in messages(update(s, new, old))


def test_adding_a_scheduling_gate_is_forbidden():
    s = pods()
    old = created(s, a_pod(schedulingGates=[{"name": "a"}]))
    new = edited(old)
    new["spec"]["schedulingGates"].append({"name": "b"})
    assert messages(update(s, new, old)) == [
        "spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate 'b'"]


def test_grace_period_may_go_from_negative_to_one_only():
    s = pods()
    old = created(s, a_pod(terminationGracePeriodSeconds=-1))
    to_one, to_five = edited(old), edited(old)
    to_one["spec"]["terminationGracePeriodSeconds"] = 1
    to_five["spec"]["terminationGracePeriodSeconds"] = 5
    assert update(s, to_one, old) == []
    assert [c["field"] for c in update(s, to_five, edited(old))] == ["spec"]


def test_adding_a_container_stops_at_the_container_rule():
    s = pods()
    old = created(s, a_pod())
    new = edited(old)
    new["spec"]["containers"].append({"name": "two", "image": "b"})
    assert messages(update(s, new, old)) == ["spec.containers: Forbidden: pod updates may not add or remove containers"]


def test_spec_changes_bump_generation_and_metadata_changes_do_not():
    s = pods()
    old = created(s, a_pod())
    relabelled = edited(old)
    relabelled["metadata"]["labels"] = {"a": "b"}
    assert update(s, relabelled, old) == []
    assert relabelled["metadata"]["generation"] == 1
    new_image = edited(old)
    new_image["spec"]["containers"][0]["image"] = "nginx:2"
    assert update(s, new_image, old) == []
    assert new_image["metadata"]["generation"] == 2


def test_an_update_keeps_the_stored_status():
    s = pods()
    old = created(s, a_pod())
    old["status"]["phase"] = "Running"
    new = edited(old)
    new["status"] = {"phase": "Failed"}
    assert update(s, new, old) == []
    assert new["status"]["phase"] == "Running"


def test_a_status_write_keeps_spec_and_backfills_qos_class():
    s = pods().status_strategy()
    old = created(pods(), a_pod())
    new = edited(old)
    new["spec"]["containers"][0]["image"] = "changed"
    new["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    assert update(s, new, old) == []
    assert new["spec"] == old["spec"]
    assert new["status"]["qosClass"] == "BestEffort"


def test_a_status_write_may_not_change_the_qos_class():
    s = pods().status_strategy()
    old = created(pods(), a_pod())
    new = edited(old)
    new["status"]["qosClass"] = "Guaranteed"
    assert messages(update(s, new, old)) == ['status.qosClass: Invalid value: "Guaranteed": field is immutable']


def test_an_update_may_not_rename_a_pod():
    s = pods()
    old = created(s, a_pod())
    new = edited(old)
    new["metadata"]["name"] = "other"
    assert 'metadata.name: Invalid value: "other": field is immutable' in messages(update(s, new, old))


def _userns_strategy(gate_on: bool):
    from apiserver import features

    s = pods()
    s.gates = features.FeatureGates({"UserNamespacesHostNetworkSupport": gate_on})
    return s


def test_host_network_with_own_user_namespace_follows_its_gate():
    forbidden = ["spec.hostNetwork: Forbidden: when `pod.Spec.HostUsers` is false"]
    assert messages(create(_userns_strategy(False), a_pod(hostUsers=False, hostNetwork=True))) == forbidden
    assert create(_userns_strategy(True), a_pod(hostUsers=False, hostNetwork=True)) == []
    # hostPID stays forbidden with the gate on.
    assert messages(create(_userns_strategy(True), a_pod(hostUsers=False, hostPID=True))) == [
        "spec.HostPID: Forbidden: when `pod.Spec.HostUsers` is false"]


def test_a_stored_host_network_userns_pod_stays_updatable_with_the_gate_off():
    old = created(_userns_strategy(True), a_pod(hostUsers=False, hostNetwork=True))
    new = edited(old)
    new["metadata"]["labels"] = {"a": "b"}
    assert update(_userns_strategy(False), new, old) == []
