"""The `proxy` subresource of pods, services and nodes, driven by the `kubernetes` 36.0.3 Python
client's connect_*_proxy calls and plain HTTP: each kind reads `[scheme:]name[:port]` and answers
kube's reason for not reaching its target (no pod IP, no port, no endpoints, no node address);
none of them reads a service or a node as if it were a pod.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Callable

import pytest
from kubernetes import client as pyclient
from kubernetes.client.rest import ApiException

from apiserver.subresources import proxy

NS = "/api/v1/namespaces/default"


def _core(api: Any) -> pyclient.CoreV1Api:
    return pyclient.CoreV1Api(pyclient.ApiClient(pyclient.Configuration(host=api.url)))


async def _refused(call: Callable[[], Any]) -> tuple[int, dict[str, Any]]:
    # The server runs on this loop and the Python client blocks: its calls go to a thread.
    with pytest.raises(ApiException) as raised:
        await asyncio.to_thread(call)
    return raised.value.status, json.loads(raised.value.body)


@pytest.mark.parametrize(("id", "want"), [
    ("web", ("", "web", "")), ("web:80", ("", "web", "80")), ("https:web:443", ("https", "web", "443")),
    ("ftp:web:21", None), (":80", None), ("a:b:c:d", None),
])
def test_names_are_read_as_scheme_name_port(id: str, want: tuple[str, str, str] | None) -> None:
    assert proxy.split_scheme_name_port(id) == want


async def test_a_service_without_endpoints_is_unavailable(api: Any) -> None:
    await api.request("POST", f"{NS}/services", json={"metadata": {"name": "web"},
                                                      "spec": {"ports": [{"name": "http", "port": 80}]}})
    await api.request("POST", f"{NS}/endpoints", json={"metadata": {"name": "web"}})
    core = _core(api)

    status, body = await _refused(lambda: core.connect_get_namespaced_service_proxy("web", "default"))

    assert (status, body["reason"]) == (503, "ServiceUnavailable")
    assert body["message"] == 'no endpoints available for service "web"'


async def test_a_service_port_is_looked_up_by_number(api: Any) -> None:
    await api.request("POST", f"{NS}/services", json={"metadata": {"name": "db"}, "spec": {"ports": [{"port": 5432}]}})
    core = _core(api)

    status, body = await _refused(lambda: core.connect_get_namespaced_service_proxy_with_path("db:6543", "default", "x"))
    assert (status, body["message"]) == (503, 'no service port 6543 found for service "db"')
    # Its Endpoints do not exist (no endpoints controller here): kube's lookup says so.
    status, body = await _refused(lambda: core.connect_get_namespaced_service_proxy("db:5432", "default"))
    assert (status, body["message"]) == (404, 'endpoints "db" not found')
    status, body = await _refused(lambda: core.connect_get_namespaced_service_proxy("gone:80", "default"))
    assert (status, body["message"]) == (404, 'services "gone" not found')


async def test_a_pod_without_an_ip_is_not_an_allowed_address(api: Any) -> None:
    await api.request("POST", f"{NS}/pods", json={"metadata": {"name": "p"},
                                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
    core = _core(api)

    status, body = await _refused(lambda: core.connect_get_namespaced_pod_proxy_with_path("p:8080", "default", "healthz"))

    assert (status, body["reason"], body["message"]) == (400, "BadRequest", "address not allowed")


async def test_a_node_without_addresses_has_no_preferred_address(api: Any) -> None:
    await api.request("POST", "/api/v1/nodes", json={"metadata": {"name": "n1"}})
    core = _core(api)

    status, body = await _refused(lambda: core.connect_get_node_proxy("n1"))
    assert (status, body["message"]) == (500, "no preferred addresses found; known addresses: []")
    status, body = await _refused(lambda: core.connect_get_node_proxy("n2"))
    assert (status, body["message"]) == (404, 'nodes "n2" not found')


async def test_a_malformed_name_is_a_bad_request(api: Any) -> None:
    status, body, _ = await api.request("GET", f"{NS}/services/ftp:web:21/proxy/")
    assert (status, body["message"]) == (400, 'invalid service request "ftp:web:21"')


async def test_a_service_with_a_ready_endpoint_names_it_as_unreachable(api: Any) -> None:
    await api.request("POST", f"{NS}/services", json={"metadata": {"name": "api"},
                                                      "spec": {"ports": [{"name": "http", "port": 80}]}})
    await api.request("POST", f"{NS}/endpoints", json={"metadata": {"name": "api"}, "subsets": [{
        "addresses": [{"ip": "10.0.0.5"}], "ports": [{"name": "http", "port": 8080}]}]})
    core = _core(api)

    status, body = await _refused(lambda: core.connect_get_namespaced_service_proxy("api:80", "default"))
    assert (status, body["message"]) == (
        503, 'haru has no pod network: endpoint 10.0.0.5:8080 of service "api" cannot be reached')
    # A port name no subset serves: kube names the whole request in its answer.
    status, body = await _refused(lambda: core.connect_get_namespaced_service_proxy("api:metrics", "default"))
    assert (status, body["message"]) == (503, 'no endpoints available for service "api:metrics"')
