"""kubectl v1.36.3 and the `kubernetes` 36.0.3 client against a real `haru up` with hollow nodes:
events.k8s.io/v1 Events (what the scheduler writes) are core/v1 Events too — `kubectl get events`,
`describe pod`, `kubectl events --for` — and a bound pod a finalizer holds goes away once the finalizer
is removed after its kubelet finished (the kubelet's final DELETE leaves deletionGracePeriodSeconds 0).
"""

from __future__ import annotations

import json
import textwrap
import time

import pytest
from kubernetes import client, config

from tests.conftest import Cluster

pytestmark = pytest.mark.slow


def _pod(haru: Cluster, namespace: str, name: str, extra_meta: str = "") -> str:
    haru.kubectl("apply", "-f", "-", input=textwrap.dedent(f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: {name}, namespace: {namespace}{extra_meta}}}
        spec:
          nodeName: cpu-0
          terminationGracePeriodSeconds: 2
          containers: [{{name: c, image: nginx}}]
        """))
    return haru.kubectl("get", "pod", name, "-n", namespace, "-o", "jsonpath={.metadata.uid}").stdout


def test_scheduler_style_events_show_in_every_kubectl_view(haru: Cluster) -> None:
    haru.kubectl("create", "namespace", "ev")
    uid = _pod(haru, "ev", "web")
    events = client.EventsV1Api(config.new_client_from_config(config_file=haru.kubeconfig))
    events.create_namespaced_event("ev", client.EventsV1Event(
        metadata=client.V1ObjectMeta(name="web.scheduled"), event_time="2026-12-01T10:00:00.000000Z",
        reporting_controller="default-scheduler", reporting_instance="default-scheduler-haru", action="Binding",
        reason="Scheduled", type="Normal", note="Successfully assigned ev/web to cpu-0",
        regarding=client.V1ObjectReference(kind="Pod", namespace="ev", name="web", uid=uid, api_version="v1")))
    haru.kubectl("create", "-f", "-", input=textwrap.dedent(f"""\
        apiVersion: v1
        kind: Event
        metadata: {{name: web.pulled, namespace: ev}}
        involvedObject: {{apiVersion: v1, kind: Pod, namespace: ev, name: web, uid: {uid}}}
        reason: Pulled
        message: Container image "nginx" already present on machine
        type: Normal
        source: {{component: kubelet, host: cpu-0}}
        firstTimestamp: "2026-12-01T10:00:01Z"
        lastTimestamp: "2026-12-01T10:00:01Z"
        count: 1
        """))

    listed = haru.kubectl("get", "events", "-n", "ev").stdout
    assert listed.splitlines()[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert "Scheduled   pod/web   Successfully assigned ev/web to cpu-0" in listed
    described = haru.kubectl("describe", "pod", "web", "-n", "ev").stdout
    events_part = described[described.index("Events:"):]
    assert "default-scheduler  Successfully assigned ev/web to cpu-0" in events_part
    assert "Pulled" in events_part

    new_api = haru.kubectl("get", "events.v1.events.k8s.io", "-n", "ev").stdout
    assert "Pulled      pod/web   Container image" in new_api and "Scheduled" in new_api
    selected = haru.kubectl("get", "events.v1.events.k8s.io", "-n", "ev", "--field-selector",
                            "regarding.name=web,reportingController=default-scheduler", "-o", "name").stdout
    assert selected.split() == ["event.events.k8s.io/web.scheduled"]
    for_pod = haru.kubectl("events", "-n", "ev", "--for", "pod/web").stdout
    assert "Scheduled" in for_pod and "Pulled" in for_pod

    scheduled = events.read_namespaced_event("web.scheduled", "ev")
    assert scheduled.regarding.uid == uid and scheduled.reporting_controller == "default-scheduler"
    # A core event read as events.k8s.io/v1 has `eventTime: null`, as upstream serves it (the Python
    # client's typed model refuses that, against any cluster), so kubectl reads this one.
    pulled = json.loads(haru.kubectl("get", "events.v1.events.k8s.io", "web.pulled", "-n", "ev", "-o", "json").stdout)
    assert pulled["deprecatedSource"] == {"component": "kubelet", "host": "cpu-0"} and pulled["deprecatedCount"] == 1
    assert pulled["note"].startswith("Container image") and pulled["eventTime"] is None
    as_core = json.loads(haru.kubectl("get", "event", "web.scheduled", "-n", "ev", "-o", "json").stdout)
    assert as_core["involvedObject"]["uid"] == uid and as_core["reportingComponent"] == "default-scheduler"


def test_a_finalized_pod_goes_when_its_finalizer_is_removed_after_the_kubelet_finished(haru: Cluster) -> None:
    haru.kubectl("create", "namespace", "fin")
    _pod(haru, "fin", "held", ", finalizers: [example.com/x]")
    haru.kubectl("wait", "-n", "fin", "--for=jsonpath={.status.phase}=Running", "pod/held", "--timeout=60s")
    haru.kubectl("delete", "pod", "held", "-n", "fin", "--wait=false")
    grace = ""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # the kubelet stops the containers, then sends its final DELETE
        grace = haru.kubectl("get", "pod", "held", "-n", "fin", "-o",
                             "jsonpath={.metadata.deletionGracePeriodSeconds}").stdout
        if grace == "0":
            break
        time.sleep(0.5)
    assert grace == "0"
    haru.kubectl("patch", "pod", "held", "-n", "fin", "--type=json",
                 "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')
    gone = haru.kubectl("get", "pod", "held", "-n", "fin", check=False)
    assert gone.returncode == 1 and 'pods "held" not found' in gone.stderr
