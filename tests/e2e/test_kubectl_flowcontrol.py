"""kubectl v1.36.3 against `haru up`'s API Priority and Fairness objects, metrics and headers.

`kubectl get flowschemas` / `prioritylevelconfigurations` list upstream's defaults with upstream's
columns (the FlowSchemas in matching order), every answer names its FlowSchema and priority level
in the `X-Kubernetes-PF-*` headers (kubectl -v=8 prints them), and /metrics has the
apiserver_flowcontrol_* families. The admin kubeconfig is kubeadm's (group kubeadm:cluster-admins,
not system:masters), so its requests are global-default's, as on a kubeadm cluster.
"""

from __future__ import annotations

import json

EXPECTED_ORDER = ["exempt", "probes", "system-leader-election", "endpoint-controller", "workload-leader-election",
                  "system-node-high", "system-nodes", "kube-controller-manager", "kube-scheduler",
                  "kube-system-service-accounts", "service-accounts", "global-default", "catch-all"]


def test_kubectl_lists_upstreams_flow_schemas_in_matching_order_with_their_columns(haru):
    out = haru.kubectl("get", "flowschemas").stdout.splitlines()
    assert out[0].split() == ["NAME", "PRIORITYLEVEL", "MATCHINGPRECEDENCE", "DISTINGUISHERMETHOD", "AGE", "MISSINGPL"]
    rows = [line.split() for line in out[1:]]
    assert [r[0] for r in rows] == EXPECTED_ORDER
    node_high = next(r for r in rows if r[0] == "system-node-high")
    assert node_high[1:4] == ["node-high", "400", "ByUser"] and node_high[-1] == "False"


def test_kubectl_lists_the_priority_levels_with_shares_and_queues(haru):
    out = haru.kubectl("get", "prioritylevelconfigurations").stdout.splitlines()
    rows = {line.split()[0]: line.split() for line in out[1:]}
    assert rows["exempt"][1:5] == ["Exempt", "<none>", "<none>", "<none>"]
    assert rows["catch-all"][1:6] == ["Limited", "5", "<none>", "<none>", "<none>"]
    assert rows["workload-low"][1:6] == ["Limited", "100", "128", "6", "50"]
    assert rows["leader-election"][1:6] == ["Limited", "10", "16", "4", "50"]


def test_answers_name_their_flow_schema_and_level_and_metrics_count_them(haru):
    schemas = json.loads(haru.kubectl("get", "flowschemas", "-o", "json").stdout)["items"]
    uid = {s["metadata"]["name"]: s["metadata"]["uid"] for s in schemas}
    verbose = haru.kubectl("get", "namespaces", "-v=8").stderr
    assert f"X-Kubernetes-Pf-Flowschema-Uid: {uid['global-default']}" in verbose, verbose[-2000:]
    assert "X-Kubernetes-Pf-Prioritylevel-Uid: " in verbose
    metrics = haru.kubectl("get", "--raw", "/metrics").stdout
    assert 'apiserver_flowcontrol_dispatched_requests_total{flow_schema="global-default",priority_level="global-default"}' in metrics
    assert 'apiserver_flowcontrol_nominal_limit_seats{priority_level="node-high"} 98' in metrics
