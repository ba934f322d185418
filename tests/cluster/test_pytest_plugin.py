"""The `haru_cluster` pytest plugin (cluster/pytest_plugin.py) as an operator's test suite uses it.

The fixtures come from the installed entry point, not from a conftest: these tests fail if the
`pytest11` registration breaks. They drive the `kubernetes` Python client the fixture yields.
"""

from __future__ import annotations

import socket
import ssl
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

pytest_plugins = ["pytester"]
CRDS = Path(__file__).parent / "crds"


def _ready(node) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or [])


def test_the_default_cluster_is_ready_when_yielded(haru_cluster):
    assert urlsplit(haru_cluster.endpoint).scheme == "https"
    config = yaml.safe_load(Path(haru_cluster.kubeconfig).read_text())
    assert config["clusters"][0]["cluster"]["server"] == haru_cluster.endpoint
    core = client.CoreV1Api(haru_cluster.api_client)
    nodes = core.list_node().items
    assert [n.metadata.name for n in nodes] == haru_cluster.node_names and len(nodes) == 1
    assert all(_ready(n) for n in nodes)
    assert core.read_namespaced_service_account("default", "default").metadata.name == "default"


def test_the_endpoint_verifies_against_the_kubeconfig_ca(haru_cluster):
    """The client's HTTPS is real: the CA in the kubeconfig signs the serving certificate."""
    import base64
    config = yaml.safe_load(Path(haru_cluster.kubeconfig).read_text())
    ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
    parts = urlsplit(haru_cluster.endpoint)
    context = ssl.create_default_context(cadata=ca)
    with socket.create_connection((parts.hostname, parts.port), timeout=5) as raw:
        with context.wrap_socket(raw, server_hostname=parts.hostname) as tls:
            assert tls.version()
    with pytest.raises(ssl.SSLError):
        with socket.create_connection((parts.hostname, parts.port), timeout=5) as raw:
            ssl.create_default_context().wrap_socket(raw, server_hostname=parts.hostname)


@pytest.mark.haru_cluster(nodes=3, crd_dirs=[CRDS])
def test_the_marker_sets_nodes_and_loads_crds(haru_cluster):
    nodes = client.CoreV1Api(haru_cluster.api_client).list_node().items
    assert len(nodes) == 3 and all(_ready(n) for n in nodes)
    custom = client.CustomObjectsApi(haru_cluster.api_client)
    widget = {"apiVersion": "example.haru.dev/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 2}}
    created = custom.create_namespaced_custom_object("example.haru.dev", "v1", "default", "widgets", widget)
    assert created["spec"] == {"size": 2}
    with pytest.raises(ApiException) as caught:
        custom.create_namespaced_custom_object("example.haru.dev", "v1", "default", "widgets",
                                               {**widget, "metadata": {"name": "bad"}, "spec": {"size": "big"}})
    assert caught.value.status == 422


@pytest.mark.parametrize("haru_cluster", [{"nodes": 2, "feature_gates": "ShardedListAndWatch=false"}], indirect=True)
def test_indirect_parametrization_sets_options(haru_cluster):
    assert len(client.CoreV1Api(haru_cluster.api_client).list_node().items) == 2


def test_a_bad_option_is_a_usage_error(pytester):
    pytester.makepyfile("""
        import pytest

        @pytest.mark.haru_cluster(racks=2)
        def test_it(haru_cluster):
            pass
    """)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-o", "asyncio_default_fixture_loop_scope=function")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*haru_cluster options*racks*"])


def test_teardown_stops_the_server_and_scopes_share_a_cluster(pytester, tmp_path):
    record = tmp_path / "endpoints.txt"
    pytester.makepyfile(f"""
        def test_one(haru_cluster_module, haru_cluster):
            assert haru_cluster_module.endpoint != haru_cluster.endpoint
            with open({str(record)!r}, "a") as f:
                f.write(haru_cluster_module.endpoint + " " + haru_cluster.endpoint + "\\n")

        def test_two(haru_cluster_module):
            with open({str(record)!r}, "a") as f:
                f.write(haru_cluster_module.endpoint + "\\n")
    """)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-o", "asyncio_default_fixture_loop_scope=function")
    result.assert_outcomes(passed=2)
    first, second = record.read_text().splitlines()
    module_endpoint, test_endpoint = first.split()
    assert second == module_endpoint  # one module-scoped cluster for both tests
    for endpoint in (module_endpoint, test_endpoint):
        parts = urlsplit(endpoint)
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection((parts.hostname, parts.port), timeout=5).close()


def _gang_job(name):
    container = client.V1Container(name="main", image="busybox", command=["sh", "-c", "exit 0"])
    template = client.V1PodTemplateSpec(spec=client.V1PodSpec(containers=[container], restart_policy="Never"))
    return client.V1Job(metadata=client.V1ObjectMeta(name=name), spec=client.V1JobSpec(
        completions=2, parallelism=2, completion_mode="Indexed", template=template))


def _workloads_for(haru_cluster, job):
    import time
    batch = client.BatchV1Api(haru_cluster.api_client)
    core = client.CoreV1Api(haru_cluster.api_client)
    batch.create_namespaced_job("default", _gang_job(job))
    deadline = time.monotonic() + 20
    while len(core.list_namespaced_pod("default", label_selector=f"batch.kubernetes.io/job-name={job}").items) < 2:
        assert time.monotonic() < deadline, "the Job made no pods"
        time.sleep(0.05)
    items = client.SchedulingV1alpha2Api(haru_cluster.api_client).list_namespaced_workload("default").items
    return [w for w in items if w.spec.controller_ref.name == job]


def test_the_controllers_get_the_clusters_feature_gates(haru_cluster):
    """Gates on (haru's default): the Job controller gives a gang-shaped Job its Workload."""
    [workload] = _workloads_for(haru_cluster, "gang")
    assert workload.spec.pod_group_templates[0].scheduling_policy.gang.min_count == 2


@pytest.mark.parametrize("haru_cluster", [{"feature_gates": "WorkloadWithJob=false"}], indirect=True)
def test_workload_with_job_off_reaches_the_embedded_controllers(haru_cluster):
    assert _workloads_for(haru_cluster, "plain") == []
