"""Server-side Tables: durations, pod status rules, one Table per kind, includeObject, and kubectl."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone
from pathlib import Path

import msgspec
import pytest

from apiserver import tables

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
CREATED = "2025-12-30T00:00:00Z"  # two days before NOW
DATA = Path(__file__).resolve().parents[2] / "apiserver" / "data" / "resources-1.36.json"


def meta(name: str, **extra) -> dict:
    return {"name": name, "creationTimestamp": CREATED, **extra}


DURATIONS = [
    pytest.param(0, "0s", id="now"),
    pytest.param(-1.5, "0s", id="up to two seconds in the future is now"),
    pytest.param(-2.5, "<invalid>", id="further in the future is invalid"),
    pytest.param(119, "119s", id="seconds up to two minutes"),
    pytest.param(120, "2m", id="two whole minutes"),
    pytest.param(200, "3m20s", id="minutes and seconds under ten minutes"),
    pytest.param(900, "15m", id="minutes up to three hours"),
    pytest.param(3 * 3600 - 1, "179m", id="just under three hours is still minutes"),
    pytest.param(5 * 3600 + 600, "5h10m", id="hours and minutes under eight hours"),
    pytest.param(20 * 3600, "20h", id="hours up to two days"),
    pytest.param(3 * 86400 + 4 * 3600, "3d4h", id="days and hours under eight days"),
    pytest.param(30 * 86400, "30d", id="days up to two years"),
    pytest.param(2 * 365 * 86400 + 10 * 86400, "2y10d", id="years and days under eight years"),
    pytest.param(9 * 365 * 86400, "9y", id="whole years after eight years"),
]


@pytest.mark.parametrize("seconds, text", DURATIONS)
def test_human_durations_follow_upstream_rules(seconds: float, text: str) -> None:
    assert tables.human_duration(seconds) == text


# --- pods ------------------------------------------------------------------------------------------


def pod(status: dict, *, init: list[dict] | None = None, containers: int = 1, **meta_extra) -> dict:
    spec: dict = {"containers": [{"name": f"c{i}", "image": "busybox"} for i in range(containers)]}
    if init is not None:
        spec["initContainers"] = init
    return {"metadata": meta("p", **meta_extra), "spec": spec, "status": status}


RUNNING = {"running": {"startedAt": CREATED}}
READY_TRUE = {"type": "Ready", "status": "True"}
INIT_SPECS = [{"name": "i0"}, {"name": "i1"}]
SIDECAR_SPECS = [{"name": "log", "restartPolicy": "Always"}]

POD_CASES = [
    pytest.param(pod({"phase": "Running", "containerStatuses": [{"name": "c0", "ready": True, "state": RUNNING, "restartCount": 0}]}),
                 ("1/1", "Running", "0"), id="a running ready pod"),
    pytest.param(pod({"phase": "Pending"}), ("0/1", "Pending", "0"), id="a pending pod without statuses shows its phase"),
    pytest.param(pod({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]}),
                 ("0/1", "SchedulingGated", "0"), id="a gated pod shows SchedulingGated"),
    pytest.param(pod({"phase": "Failed", "reason": "Evicted"}), ("0/1", "Evicted", "0"), id="the status reason wins over the phase"),
    pytest.param(pod({"phase": "Pending", "initContainerStatuses": [{"name": "i0", "state": {"waiting": {"reason": "ImagePullBackOff"}}}]},
                     init=INIT_SPECS), ("0/1", "Init:ImagePullBackOff", "0"), id="a waiting init container shows Init:reason"),
    pytest.param(pod({"phase": "Pending", "initContainerStatuses": [{"name": "i0", "state": {"waiting": {"reason": "PodInitializing"}}}]},
                     init=INIT_SPECS), ("0/1", "Init:0/2", "0"), id="PodInitializing shows init progress"),
    pytest.param(pod({"phase": "Pending", "initContainerStatuses": [
        {"name": "i0", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
        {"name": "i1", "state": RUNNING}]}, init=INIT_SPECS), ("0/1", "Init:1/2", "0"), id="the second init container running"),
    pytest.param(pod({"phase": "Pending", "initContainerStatuses": [{"name": "i0", "restartCount": 3,
                                                                    "state": {"terminated": {"exitCode": 1}}}]}, init=INIT_SPECS),
                 ("0/1", "Init:ExitCode:1", "3"), id="a failed init container without reason shows its exit code and restarts"),
    pytest.param(pod({"phase": "Pending", "initContainerStatuses": [{"name": "i0", "state": {"terminated": {"exitCode": 137, "signal": 9}}}]},
                     init=INIT_SPECS), ("0/1", "Init:Signal:9", "0"), id="a signalled init container shows the signal"),
    pytest.param(pod({"phase": "Pending", "initContainerStatuses": [{"name": "i0", "state": {"terminated": {"exitCode": 2, "reason": "Error"}}}]},
                     init=INIT_SPECS), ("0/1", "Init:Error", "0"), id="a failed init container with a reason"),
    pytest.param(pod({"phase": "Running", "conditions": [READY_TRUE, {"type": "Initialized", "status": "True"}],
                      "initContainerStatuses": [{"name": "log", "started": True, "ready": True, "restartCount": 1, "state": RUNNING,
                                                 "lastState": {"terminated": {"finishedAt": "2025-12-31T23:50:00Z"}}}],
                      "containerStatuses": [{"name": "c0", "ready": True, "state": RUNNING}]}, init=SIDECAR_SPECS),
                 ("2/2", "Running", "1 (10m ago)"), id="a ready sidecar counts towards READY and RESTARTS"),
    pytest.param(pod({"phase": "Pending", "initContainerStatuses": [{"name": "log", "started": False, "state": {"waiting": {"reason": "ContainerCreating"}}}]},
                     init=SIDECAR_SPECS), ("0/2", "Init:ContainerCreating", "0"), id="a sidecar not yet started blocks init"),
    pytest.param(pod({"phase": "Running", "containerStatuses": [
        {"name": "c0", "restartCount": 5, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
         "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2025-12-31T23:58:00Z"}}}]}),
                 ("0/1", "CrashLoopBackOff", "5 (2m ago)"), id="CrashLoopBackOff shows restarts with the last one's age"),
    pytest.param(pod({"phase": "Succeeded", "containerStatuses": [{"name": "c0", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}),
                 ("0/1", "Completed", "0"), id="a finished pod shows Completed"),
    pytest.param(pod({"phase": "Running", "conditions": [READY_TRUE], "containerStatuses": [
        {"name": "c0", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
        {"name": "c1", "ready": True, "state": RUNNING}]}, containers=2),
                 ("1/2", "Running", "0"), id="Completed with a ready running container is Running"),
    pytest.param(pod({"phase": "Running", "containerStatuses": [
        {"name": "c0", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
        {"name": "c1", "ready": True, "state": RUNNING}]}, containers=2),
                 ("1/2", "NotReady", "0"), id="Completed with a running container but no Ready condition is NotReady"),
    pytest.param(pod({"phase": "Running", "containerStatuses": [{"name": "c0", "state": {"terminated": {"exitCode": 137}}}]}),
                 ("0/1", "ExitCode:137", "0"), id="a terminated container without reason shows its exit code"),
    pytest.param(pod({"phase": "Running", "containerStatuses": [{"name": "c0", "state": {"terminated": {"exitCode": 0, "signal": 15}}}]}),
                 ("0/1", "Signal:15", "0"), id="a terminated container with a signal"),
    pytest.param(pod({"phase": "Running", "containerStatuses": [{"name": "c0", "ready": True, "state": RUNNING}]}, deletionTimestamp=CREATED),
                 ("1/1", "Terminating", "0"), id="a deleted running pod is Terminating"),
    pytest.param(pod({"phase": "Running", "reason": "NodeLost"}, deletionTimestamp=CREATED), ("0/1", "Unknown", "0"),
                 id="a deleted pod on a lost node is Unknown"),
    pytest.param(pod({"phase": "Succeeded", "containerStatuses": [{"name": "c0", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]},
                     deletionTimestamp=CREATED), ("0/1", "Completed", "0"), id="a deleted finished pod keeps its status"),
]


@pytest.mark.parametrize("obj, expected", POD_CASES)
def test_pod_ready_status_and_restarts_follow_upstream(obj: dict, expected: tuple[str, str, str]) -> None:
    cells = tables.row("", "pods", obj, now=NOW)["cells"]
    assert (cells[1], cells[2], cells[3]) == expected


def test_finished_pods_carry_a_completed_row_condition() -> None:
    done = tables.row("", "pods", pod({"phase": "Succeeded"}), now=NOW)
    failed = tables.row("", "pods", pod({"phase": "Failed"}), now=NOW)
    running = tables.row("", "pods", pod({"phase": "Running"}), now=NOW)
    assert done["conditions"] == [{"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."}]
    assert failed["conditions"][0]["reason"] == "Failed" and failed["conditions"][0]["message"] == "The pod failed."
    assert "conditions" not in running


def test_pod_wide_cells_show_ip_node_nominated_node_and_gates() -> None:
    obj = pod({"phase": "Running", "podIPs": [{"ip": "10.1.0.5"}, {"ip": "fd00::5"}], "nominatedNodeName": "n2",
               "conditions": [{"type": "example.com/ready", "status": "True"}]})
    obj["spec"].update(nodeName="n1", readinessGates=[{"conditionType": "example.com/ready"}, {"conditionType": "example.com/other"}])
    assert tables.row("", "pods", obj, now=NOW)["cells"][4:] == ["2d", "10.1.0.5", "n1", "n2", "1/2"]
    assert tables.row("", "pods", pod({"phase": "Pending"}), now=NOW)["cells"][5:] == ["<none>", "<none>", "<none>", "<none>"]


# --- one Table per kind ----------------------------------------------------------------------------

TEMPLATE = {"spec": {"containers": [{"name": "web", "image": "nginx:1"}, {"name": "log", "image": "busybox"}]}}
SELECTOR = {"matchLabels": {"app": "web"}}

KINDS = [
    pytest.param("", "nodes", {"metadata": meta("n1", labels={"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "gpu"}),
                               "spec": {"unschedulable": True},
                               "status": {"conditions": [{"type": "Ready", "status": "True"}],
                                          "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
                                          "nodeInfo": {"kubeletVersion": "v1.36.3", "osImage": "Haru", "kernelVersion": "6.1",
                                                       "architecture": "amd64", "containerRuntimeVersion": "hollow://1"}}},
                 ["n1", "Ready,SchedulingDisabled", "control-plane,gpu", "2d", "v1.36.3", "10.0.0.1", "<none>", "Haru", "6.1 (amd64)", "hollow://1"],
                 id="nodes"),
    pytest.param("", "nodes", {"metadata": meta("n2"), "status": {}},
                 ["n2", "Unknown", "<none>", "2d", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"], id="a node without status"),
    pytest.param("", "namespaces", {"metadata": meta("default"), "status": {"phase": "Terminating"}}, ["default", "Terminating", "2d"], id="namespaces"),
    pytest.param("apps", "deployments", {"metadata": meta("web"), "spec": {"replicas": 3, "selector": SELECTOR, "template": TEMPLATE},
                                         "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}},
                 ["web", "2/3", 3, 2, "2d", "web,log", "nginx:1,busybox", "app=web"], id="deployments"),
    pytest.param("apps", "replicasets", {"metadata": meta("web-1"), "spec": {"replicas": 2, "selector": SELECTOR, "template": TEMPLATE},
                                         "status": {"replicas": 2, "readyReplicas": 1}},
                 ["web-1", 2, 2, 1, "2d", "web,log", "nginx:1,busybox", "app=web"], id="replicasets"),
    pytest.param("apps", "statefulsets", {"metadata": meta("db"), "spec": {"replicas": 3, "template": TEMPLATE}, "status": {"readyReplicas": 3}},
                 ["db", "3/3", "2d", "web,log", "nginx:1,busybox"], id="statefulsets"),
    pytest.param("apps", "daemonsets", {"metadata": meta("agent"), "spec": {"selector": SELECTOR, "template": {
        "spec": {"nodeSelector": {"disk": "ssd"}, "containers": [{"name": "a", "image": "agent"}]}}},
        "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": 2, "updatedNumberScheduled": 3, "numberAvailable": 2}},
                 ["agent", 3, 3, 2, 3, 2, "disk=ssd", "2d", "a", "agent", "app=web"], id="daemonsets"),
    pytest.param("batch", "jobs", {"metadata": meta("pi"), "spec": {"completions": 3, "selector": SELECTOR, "template": TEMPLATE},
                                   "status": {"succeeded": 1, "startTime": "2025-12-31T23:55:00Z"}},
                 ["pi", "Running", "1/3", "5m", "2d", "web,log", "nginx:1,busybox", "app=web"], id="a running job"),
    pytest.param("batch", "jobs", {"metadata": meta("pi"), "spec": {"parallelism": 4, "template": TEMPLATE},
                                   "status": {"succeeded": 4, "startTime": "2025-12-31T23:00:00Z", "completionTime": "2025-12-31T23:03:20Z",
                                              "conditions": [{"type": "Complete", "status": "True"}]}},
                 ["pi", "Complete", "4/1 of 4", "3m20s", "2d", "web,log", "nginx:1,busybox", "<none>"], id="a complete parallel job"),
    pytest.param("batch", "jobs", {"metadata": meta("pi"), "spec": {"suspend": True}, "status": {"conditions": [{"type": "Suspended", "status": "True"}]}},
                 ["pi", "Suspended", "0/1", "", "2d", "", "", "<none>"], id="a suspended job that never started"),
    pytest.param("batch", "cronjobs", {"metadata": meta("nightly"), "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": TEMPLATE}}},
                                       "status": {"active": [{"name": "j"}], "lastScheduleTime": "2025-12-31T23:00:00Z"}},
                 ["nightly", "0 3 * * *", "<none>", "False", 1, "60m", "2d", "web,log", "nginx:1,busybox", "<none>"], id="cronjobs"),
    pytest.param("", "services", {"metadata": meta("web"), "spec": {"type": "NodePort", "clusterIPs": ["10.96.0.10"], "selector": {"app": "web"},
                                                                    "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]}},
                 ["web", "NodePort", "10.96.0.10", "<none>", "80:30080/TCP,53/UDP", "2d", "app=web"], id="services"),
    pytest.param("", "services", {"metadata": meta("lb"), "spec": {"type": "LoadBalancer", "clusterIP": "10.96.0.11", "ports": [{"port": 443}]},
                                  "status": {"loadBalancer": {}}},
                 ["lb", "LoadBalancer", "10.96.0.11", "<pending>", "443/TCP", "2d", "<none>"], id="a pending load balancer"),
    pytest.param("", "services", {"metadata": meta("ext"), "spec": {"type": "ExternalName", "externalName": "example.com"}},
                 ["ext", "ExternalName", "<none>", "example.com", "<none>", "2d", "<none>"], id="an external name service"),
    pytest.param("", "endpoints", {"metadata": meta("web"), "subsets": [{"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}, {"ip": "fd00::3"}, {"ip": "10.0.0.4"}],
                                                                      "ports": [{"port": 80}]}]},
                 ["web", "10.0.0.1:80,10.0.0.2:80,[fd00::3]:80 + 1 more...", "2d"], id="endpoints"),
    pytest.param("", "configmaps", {"metadata": meta("cfg"), "data": {"a": "1"}, "binaryData": {"b": "AA=="}}, ["cfg", 2, "2d"], id="configmaps"),
    pytest.param("", "secrets", {"metadata": meta("tls"), "type": "kubernetes.io/tls", "data": {"tls.crt": "", "tls.key": ""}},
                 ["tls", "kubernetes.io/tls", 2, "2d"], id="secrets"),
    pytest.param("", "serviceaccounts", {"metadata": meta("default"), "secrets": [{"name": "x"}]}, ["default", "2d"], id="serviceaccounts"),
    pytest.param("", "events", {"metadata": meta("p.1"), "involvedObject": {"kind": "Pod", "name": "p", "fieldPath": "spec.containers{c}"},
                                "reason": "Pulled", "type": "Normal", "message": " pulled \n", "source": {"component": "kubelet", "host": "n1"},
                                "firstTimestamp": "2025-12-31T23:00:00Z", "lastTimestamp": "2025-12-31T23:59:00Z", "count": 3},
                 ["60s", "Normal", "Pulled", "pod/p", "spec.containers{c}", "kubelet, n1", "pulled", "60m", 3, "p.1"], id="core events"),
    pytest.param("", "events", {"metadata": meta("e"), "involvedObject": {"kind": "Node"}, "reason": "Starting", "type": "Normal",
                                "eventTime": "2025-12-31T23:59:30.000000Z", "reportingComponent": "kubelet", "reportingInstance": "n1"},
                 ["30s", "Normal", "Starting", "node", "", "kubelet, n1", "", "30s", 1, "e"], id="a new-style core event without a count"),
    pytest.param("events.k8s.io", "events", {"apiVersion": "events.k8s.io/v1", "metadata": meta("e2"), "regarding": {"kind": "Pod", "name": "p"},
                                             "reason": "Scheduled", "type": "Normal", "note": "assigned", "reportingController": "default-scheduler",
                                             "eventTime": "2025-12-31T23:00:00.000000Z",
                                             "series": {"count": 4, "lastObservedTime": "2025-12-31T23:59:50.000000Z"}},
                 ["10s", "Normal", "Scheduled", "pod/p", "", "default-scheduler", "assigned", "60m", 4, "e2"], id="events.k8s.io events with a series"),
    pytest.param("coordination.k8s.io", "leases", {"metadata": meta("n1"), "spec": {"holderIdentity": "n1"}}, ["n1", "n1", "2d"], id="leases"),
    pytest.param("", "persistentvolumes", {"metadata": meta("pv1"), "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteMany", "ReadWriteOnce"],
                                                                           "persistentVolumeReclaimPolicy": "Delete", "storageClassName": "fast",
                                                                           "claimRef": {"namespace": "default", "name": "data"}},
                                           "status": {"phase": "Bound"}},
                 ["pv1", "10Gi", "RWO,RWX", "Delete", "Bound", "default/data", "fast", "<unset>", "", "2d", "Filesystem"], id="persistentvolumes"),
    pytest.param("", "persistentvolumeclaims", {"metadata": meta("data"), "spec": {"volumeName": "pv1", "storageClassName": "fast", "volumeMode": "Block"},
                                                "status": {"phase": "Bound", "capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"]}},
                 ["data", "Bound", "pv1", "10Gi", "RWO", "fast", "<unset>", "2d", "Block"], id="persistentvolumeclaims"),
    pytest.param("", "persistentvolumeclaims", {"metadata": meta("new"), "spec": {}}, ["new", "Pending", "", "", "", "", "<unset>", "2d", "Filesystem"],
                 id="an unbound claim"),
    pytest.param("storage.k8s.io", "storageclasses", {"metadata": meta("fast", annotations={"storageclass.kubernetes.io/is-default-class": "true"}),
                                                      "provisioner": "haru.dev/hostpath", "volumeBindingMode": "WaitForFirstConsumer"},
                 ["fast (default)", "haru.dev/hostpath", "Delete", "WaitForFirstConsumer", False, "2d"], id="storageclasses"),
    pytest.param("scheduling.k8s.io", "priorityclasses", {"metadata": meta("high"), "value": 1000, "globalDefault": True},
                 ["high", 1000, True, "2d", "PreemptLowerPriority"], id="priorityclasses"),
    pytest.param("networking.k8s.io", "ingresses", {"metadata": meta("web"), "spec": {"ingressClassName": "nginx", "tls": [{}],
                                                                                     "rules": [{"host": "a.example"}, {"host": "b.example"}]},
                                                    "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}, {"hostname": "lb.example"}]}}},
                 ["web", "nginx", "a.example,b.example", "1.2.3.4,lb.example", "80, 443", "2d"], id="ingresses"),
    pytest.param("networking.k8s.io", "networkpolicies", {"metadata": meta("deny"), "spec": {"podSelector": {}}}, ["deny", "<none>", "2d"],
                 id="networkpolicies"),
    pytest.param("rbac.authorization.k8s.io", "rolebindings", {"metadata": meta("rb"), "roleRef": {"kind": "Role", "name": "reader"},
                                                               "subjects": [{"kind": "User", "name": "alice"}, {"kind": "Group", "name": "devs"},
                                                                            {"kind": "ServiceAccount", "namespace": "ci", "name": "bot"},
                                                                            {"kind": "User", "name": "bob"}]},
                 ["rb", "Role/reader", "2d", "alice, bob", "devs", "ci/bot"], id="rolebindings"),
    pytest.param("rbac.authorization.k8s.io", "clusterrolebindings", {"metadata": meta("crb"), "roleRef": {"kind": "ClusterRole", "name": "admin"}},
                 ["crb", "ClusterRole/admin", "2d", "", "", ""], id="clusterrolebindings"),
    pytest.param("policy", "poddisruptionbudgets", {"metadata": meta("pdb"), "spec": {"minAvailable": "50%"}, "status": {"disruptionsAllowed": 1}},
                 ["pdb", "50%", "N/A", 1, "2d"], id="poddisruptionbudgets"),
    pytest.param("autoscaling", "horizontalpodautoscalers", {
        "apiVersion": "autoscaling/v2", "metadata": meta("web"),
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 2, "maxReplicas": 10, "metrics": [
            {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}},
            {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "500Mi"}}},
            {"type": "Pods", "pods": {"target": {"type": "AverageValue", "averageValue": "1k"}}}]},
        "status": {"currentReplicas": 3, "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 55}}}]}},
                 ["web", "Deployment/web", "cpu: 55%/70%, memory: <unknown>/500Mi + 1 more...", "2", 10, 3, "2d"], id="horizontalpodautoscalers v2"),
    pytest.param("autoscaling", "horizontalpodautoscalers", {
        "apiVersion": "autoscaling/v1", "metadata": meta("web"),
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 5, "targetCPUUtilizationPercentage": 60},
        "status": {"currentReplicas": 1}},
                 ["web", "Deployment/web", "cpu: <unknown>/60%", "1", 5, 1, "2d"], id="horizontalpodautoscalers v1"),
    pytest.param("", "resourcequotas", {"metadata": meta("q"), "status": {"hard": {"pods": "10", "limits.cpu": "4", "requests.cpu": "2"},
                                                                         "used": {"pods": "3", "requests.cpu": "500m"}}},
                 ["q", "pods: 3/10, requests.cpu: 500m/2", "limits.cpu: 0/4", "2d"], id="resourcequotas"),
    pytest.param("", "limitranges", {"metadata": {"name": "lr", "creationTimestamp": "2025-12-30T01:02:03Z"}}, ["lr", "2025-12-30T01:02:03Z"],
                 id="limitranges use the default table"),
    pytest.param("rbac.authorization.k8s.io", "roles", {"metadata": meta("reader")}, ["reader", CREATED], id="roles use the default table"),
    pytest.param("rbac.authorization.k8s.io", "clusterroles", {"metadata": {"name": "admin"}}, ["admin", "0001-01-01T00:00:00Z"],
                 id="the default table prints a zero time when unset"),
    pytest.param("apiextensions.k8s.io", "customresourcedefinitions", {"metadata": {"name": "crontabs.example.com",
                                                                                    "creationTimestamp": "2025-12-30T00:00:00+02:00"}},
                 ["crontabs.example.com", "2025-12-29T22:00:00Z"], id="customresourcedefinitions use the default table in UTC"),
    pytest.param("resource.k8s.io", "resourceclaims", {"metadata": meta("gpu"), "status": {"allocation": {}, "reservedFor": [{"name": "p"}]}},
                 ["gpu", "allocated,reserved", "2d"], id="an allocated reserved claim"),
    pytest.param("resource.k8s.io", "resourceclaims", {"metadata": meta("gpu"), "status": {}}, ["gpu", "pending", "2d"], id="a pending claim"),
    pytest.param("resource.k8s.io", "resourceclaims", {"metadata": meta("gpu", deletionTimestamp=CREATED), "status": {}}, ["gpu", "deleted", "2d"],
                 id="a deleted unallocated claim"),
    pytest.param("resource.k8s.io", "resourceclaimtemplates", {"metadata": meta("tpl")}, ["tpl", "2d"], id="resourceclaimtemplates"),
    pytest.param("resource.k8s.io", "resourceslices", {"metadata": meta("n1-gpu"), "spec": {"nodeName": "n1", "driver": "gpu.haru.dev",
                                                                                          "pool": {"name": "n1", "generation": 1}}},
                 ["n1-gpu", "n1", "gpu.haru.dev", "n1", "2d"], id="resourceslices"),
    pytest.param("resource.k8s.io", "deviceclasses", {"metadata": meta("gpu.haru.dev")}, ["gpu.haru.dev", "2d"], id="deviceclasses"),
    pytest.param("scheduling.k8s.io", "podgroups", {"metadata": meta("train-0"), "spec": {
        "podGroupTemplateRef": {"workload": {"workloadName": "train", "podGroupTemplateName": "workers"}},
        "schedulingPolicy": {"gang": {"minCount": 4}}}, "status": {"conditions": [{"type": "PodGroupScheduled", "status": "True"}]}},
                 ["train-0", "Gang(minCount=4)", "train", "Scheduled", "2d"], id="podgroups"),
    pytest.param("scheduling.k8s.io", "workloads", {"metadata": meta("train")}, ["train", "2d"], id="workloads"),
    pytest.param("admissionregistration.k8s.io", "validatingadmissionpolicies", {"metadata": meta("vap"), "spec": {
        "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}, "validations": [{"expression": "true"}, {"expression": "1 == 1"}]}},
                 ["vap", 2, "v1/ConfigMap", "2d"], id="validatingadmissionpolicies"),
    pytest.param("admissionregistration.k8s.io", "mutatingadmissionpolicies", {"metadata": meta("map"), "spec": {"mutations": [{}]}},
                 ["map", 1, "<unset>", "2d"], id="mutatingadmissionpolicies"),
    pytest.param("admissionregistration.k8s.io", "validatingadmissionpolicybindings", {"metadata": meta("b"), "spec": {
        "policyName": "vap", "paramRef": {"name": "limits"}}}, ["b", "vap", "*/limits", "2d"], id="validatingadmissionpolicybindings"),
    pytest.param("admissionregistration.k8s.io", "mutatingadmissionpolicybindings", {"metadata": meta("b"), "spec": {
        "policyName": "map", "paramRef": {"selector": {"matchLabels": {"a": "b"}}}}},
                 ["b", "map", "&LabelSelector{MatchLabels:map[string]string{a: b,},MatchExpressions:[]LabelSelectorRequirement{},}", "2d"],
                 id="mutatingadmissionpolicybindings with a selector"),
    pytest.param("apiregistration.k8s.io", "apiservices", {"metadata": meta("v1beta1.metrics.k8s.io"), "spec": {
        "service": {"namespace": "kube-system", "name": "metrics"}}, "status": {"conditions": [
            {"type": "Available", "status": "False", "reason": "MissingEndpoints"}]}},
                 ["v1beta1.metrics.k8s.io", "kube-system/metrics", "False (MissingEndpoints)", "2d"], id="apiservices"),
    pytest.param("example.com", "crontabs", {"metadata": meta("c")}, ["c", CREATED], id="an unknown resource gets the default table"),
]


@pytest.mark.parametrize("group, resource, obj, expected", KINDS)
def test_each_kind_renders_the_upstream_cells(group: str, resource: str, obj: dict, expected: list) -> None:
    table = tables.render(group, resource, [obj], now=NOW, list_meta={"resourceVersion": "7"})
    assert table["rows"][0]["cells"] == expected
    assert len(table["columnDefinitions"]) == len(expected)


def test_every_printer_matches_the_1_36_column_list() -> None:
    for r in json.loads(DATA.read_text())["resources"]:
        if not r["printerColumns"]:
            continue
        want = [(c["name"], c["type"], c.get("format", ""), c["priority"]) for c in r["printerColumns"]]
        have = [(c["name"], c["type"], c["format"], c["priority"]) for c in tables.columns(r["group"], r["resource"])]
        assert have == want, f"{r['group']}/{r['resource']}"


def test_column_descriptions_come_from_the_schemas() -> None:
    by_name = {c["name"]: c for c in tables.columns("", "pods")}
    assert by_name["Name"]["description"].startswith("Name must be unique within a namespace.")
    assert by_name["IP"]["description"].startswith("podIP address allocated to the pod.")
    assert by_name["Ready"]["description"] == "The aggregate readiness state of this pod for accepting traffic."


# --- Table shape -----------------------------------------------------------------------------------

DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment",
              "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}, "creationTimestamp": CREATED, "resourceVersion": "5"},
              "spec": {"replicas": 1, "selector": SELECTOR, "template": TEMPLATE}, "status": {"readyReplicas": 1, "updatedReplicas": 1, "availableReplicas": 1}}


def test_a_table_has_the_kube_apiserver_shape_with_partial_metadata_rows() -> None:
    table = tables.render("apps", "deployments", [DEPLOYMENT], now=NOW, list_meta={"resourceVersion": "9", "continue": "", "remainingItemCount": None})
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    assert table["metadata"] == {"resourceVersion": "9"}
    assert set(table["columnDefinitions"][0]) == {"name", "type", "format", "description", "priority"}
    assert table["rows"][0]["object"] == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": DEPLOYMENT["metadata"]}
    # Integer cells stay JSON numbers on the wire.
    assert b'"cells":["web","1/1",1,1,"2d"' in msgspec.json.encode(table)


def test_include_object_selects_what_rows_carry() -> None:
    whole = tables.render("apps", "deployments", [DEPLOYMENT], include_object="Object", now=NOW)
    none = tables.render("apps", "deployments", [DEPLOYMENT], include_object="None", now=NOW)
    assert whole["rows"][0]["object"] == DEPLOYMENT
    assert none["rows"][0]["object"] is None
    with pytest.raises(tables.TableOptionsError, match='unrecognized includeObject value: "Bogus"'):
        tables.render("apps", "deployments", [DEPLOYMENT], include_object="Bogus")


def test_rendering_leaves_the_objects_untouched_and_headers_can_be_dropped() -> None:
    before = copy.deepcopy(DEPLOYMENT)
    table = tables.render("apps", "deployments", [DEPLOYMENT], now=NOW, no_headers=True)
    assert table["columnDefinitions"] is None
    assert DEPLOYMENT == before


def test_flow_schemas_are_listed_in_matching_precedence_order() -> None:
    def schema(name: str, precedence: int) -> dict:
        return {"metadata": meta(name), "spec": {"matchingPrecedence": precedence, "priorityLevelConfiguration": {"name": "pl"}}}
    table = tables.render("flowcontrol.apiserver.k8s.io", "flowschemas", [schema("b", 500), schema("a", 9000), schema("c", 500)], now=NOW)
    assert [r["cells"][0] for r in table["rows"]] == ["b", "c", "a"]
    assert table["rows"][0]["cells"][2:] == [500, "<none>", "2d", "?"]


def test_a_watch_row_is_the_same_row_a_list_would_render() -> None:
    assert tables.row("apps", "deployments", DEPLOYMENT, now=NOW) == tables.render("apps", "deployments", [DEPLOYMENT], now=NOW)["rows"][0]


# --- the real kubectl against a tiny server that serves these Tables -------------------------------


def _discovery() -> dict[str, dict]:
    def resource(name: str, kind: str, short: list[str], namespaced: bool = True) -> dict:
        verbs = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
        return {"name": name, "singularName": kind.lower(), "namespaced": namespaced, "kind": kind, "verbs": verbs,
                "shortNames": short, "categories": ["all"]}
    return {
        "/api": {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []},
        "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
            {"name": "apps", "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
             "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"}}]},
        "/api/v1": {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "v1",
                    "resources": [resource("pods", "Pod", ["po"]), resource("nodes", "Node", ["no"], namespaced=False)]},
        "/apis/apps/v1": {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "apps/v1",
                          "resources": [resource("deployments", "Deployment", ["deploy"])]},
    }


@pytest.mark.slow
async def test_real_kubectl_prints_the_served_tables(tmp_path: Path) -> None:
    import asyncio
    from datetime import timedelta

    from aiohttp import web

    from tests import realclients

    created = (datetime.now(timezone.utc) - timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    web_pod = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-1", "namespace": "default", "creationTimestamp": created},
        "spec": {"nodeName": "hollow-1", "containers": [{"name": "web", "image": "nginx"}]},
        "status": {"phase": "Running", "podIPs": [{"ip": "10.244.0.7"}], "conditions": [{"type": "Ready", "status": "True"}],
                   "containerStatuses": [{"name": "web", "ready": True, "restartCount": 2, "state": {"running": {}},
                                          "lastState": {"terminated": {"exitCode": 1, "finishedAt": created}}}]},
    }
    stuck_pod = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "init-0", "namespace": "default", "creationTimestamp": created},
        "spec": {"initContainers": [{"name": "setup"}], "containers": [{"name": "app"}]},
        "status": {"phase": "Pending", "initContainerStatuses": [{"name": "setup", "state": {"waiting": {"reason": "ImagePullBackOff"}}}]},
    }
    deployment = {**DEPLOYMENT, "metadata": {**DEPLOYMENT["metadata"], "creationTimestamp": created},
                  "spec": {**DEPLOYMENT["spec"], "replicas": 3}, "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}}
    lists = {
        "/api/v1/namespaces/default/pods": ("", "pods", "PodList", "v1", [web_pod, stuck_pod]),
        "/apis/apps/v1/namespaces/default/deployments": ("apps", "deployments", "DeploymentList", "apps/v1", [deployment]),
    }
    discovery = _discovery()
    table_requests: list[str] = []

    async def handle(request: web.Request) -> web.Response:
        path = request.path.rstrip("/") or "/"
        if path in discovery:
            return web.json_response(discovery[path])
        if path in lists:
            group, resource, list_kind, api_version, items = lists[path]
            if "as=Table" in request.headers.get("Accept", ""):
                table_requests.append(path)
                return web.json_response(tables.render(group, resource, items, list_meta={"resourceVersion": "42"}))
            return web.json_response({"kind": list_kind, "apiVersion": api_version, "metadata": {"resourceVersion": "42"}, "items": items})
        return web.json_response({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404}, status=404)

    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: haru, cluster: {{server: 'http://127.0.0.1:{port}'}}}}]\n"
        "users: [{name: me, user: {}}]\n"
        "contexts: [{name: here, context: {cluster: haru, user: me, namespace: default}}]\n"
        "current-context: here\n"
    )

    async def kubectl(*args: str) -> list[list[str]]:
        proc = await asyncio.create_subprocess_exec(
            realclients.kubectl(), f"--kubeconfig={kubeconfig}", f"--cache-dir={tmp_path / 'cache'}", *args,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err.decode()
        # Columns are separated by at least two spaces (single spaces occur inside cells).
        return [[c for c in line.split("  ") if c.strip()] for line in out.decode().splitlines()]

    try:
        pods = await kubectl("get", "pods")
        wide = await kubectl("get", "pods", "-o", "wide")
        deploys = await kubectl("get", "deploy")
    finally:
        await runner.cleanup()

    strip = lambda rows: [[c.strip() for c in r] for r in rows]  # noqa: E731
    assert strip(pods) == [
        ["NAME", "READY", "STATUS", "RESTARTS", "AGE"],
        ["web-1", "1/1", "Running", "2 (3d ago)", "3d"],
        ["init-0", "0/1", "Init:ImagePullBackOff", "0", "3d"],
    ]
    assert strip(wide) == [
        ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"],
        ["web-1", "1/1", "Running", "2 (3d ago)", "3d", "10.244.0.7", "hollow-1", "<none>", "<none>"],
        ["init-0", "0/1", "Init:ImagePullBackOff", "0", "3d", "<none>", "<none>", "<none>", "<none>"],
    ]
    assert strip(deploys) == [["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"], ["web", "2/3", "3", "2", "3d"]]
    assert table_requests == ["/api/v1/namespaces/default/pods"] * 2 + ["/apis/apps/v1/namespaces/default/deployments"]
