"""DELETE answers through the real clients, against a real `haru up`.

The `kubernetes==36.0.3` Python client deserializes each DELETE answer into the type the 1.36
OpenAPI names (V1DeviceClass, V1Service, V1Status…), so a Status where upstream returns the
object fails it; kubectl 1.36.3 must print `deleted` for every shape (waiting or not, one object
or `--all`, dry run or not, held by a finalizer or gone).
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from kubernetes import client, config

from tests.conftest import Cluster

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def api_client(haru: Cluster) -> Iterator[Any]:
    api = config.new_client_from_config(config_file=haru.kubeconfig)
    try:
        yield api
    finally:
        api.close()


def _meta(name: str, **extra: Any) -> Any:
    return client.V1ObjectMeta(name=name, **extra)


def test_python_client_gets_typed_objects_back_from_deletes(api_client: Any) -> None:
    dra = client.ResourceV1Api(api_client)
    core = client.CoreV1Api(api_client)
    dra.create_device_class(client.V1DeviceClass(metadata=_meta("py-class"), spec=client.V1DeviceClassSpec()))
    deleted = dra.delete_device_class("py-class")
    assert isinstance(deleted, client.V1DeviceClass) and deleted.metadata.name == "py-class"

    dra.create_resource_slice(client.V1ResourceSlice(metadata=_meta("py-slice"), spec=client.V1ResourceSliceSpec(
        driver="py.example.com", all_nodes=True,
        pool=client.V1ResourcePool(name="p", generation=1, resource_slice_count=1),
        devices=[client.V1Device(name="d0")])))
    deleted = dra.delete_resource_slice("py-slice")
    assert isinstance(deleted, client.V1ResourceSlice) and deleted.spec.driver == "py.example.com"

    core.create_namespaced_service("default", client.V1Service(
        metadata=_meta("py-svc"), spec=client.V1ServiceSpec(ports=[client.V1ServicePort(port=80)])))
    deleted = core.delete_namespaced_service("py-svc", "default")
    assert isinstance(deleted, client.V1Service) and deleted.spec.ports[0].port == 80

    claim = client.ResourceV1ResourceClaim(metadata=_meta("py-claim"), spec=client.V1ResourceClaimSpec(
        devices=client.V1DeviceClaim(requests=[client.V1DeviceRequest(
            name="gpu", exactly=client.V1ExactDeviceRequest(device_class_name="gpu"))])))
    dra.create_namespaced_resource_claim("default", claim)
    deleted = dra.delete_namespaced_resource_claim("py-claim", "default")
    assert isinstance(deleted, client.ResourceV1ResourceClaim) and deleted.metadata.name == "py-claim"


def test_python_client_gets_a_status_where_upstream_answers_one(api_client: Any) -> None:
    core = client.CoreV1Api(api_client)
    core.create_namespaced_config_map("default", client.V1ConfigMap(metadata=_meta("py-cm")))
    deleted = core.delete_namespaced_config_map("py-cm", "default")
    assert isinstance(deleted, client.V1Status) and deleted.status == "Success"
    assert (deleted.details.name, deleted.details.kind) == ("py-cm", "configmaps")


def test_python_client_delete_collection_accepts_the_list(api_client: Any) -> None:
    dra = client.ResourceV1Api(api_client)
    for name in ("py-col-a", "py-col-b"):
        dra.create_device_class(client.V1DeviceClass(metadata=_meta(name, labels={"py-col": "yes"}),
                                                     spec=client.V1DeviceClassSpec()))
    answer, code, _ = dra.delete_collection_device_class_with_http_info(label_selector="py-col=yes")
    assert code == 200 and answer.kind == "DeviceClassList"
    assert dra.list_device_class(label_selector="py-col=yes").items == []


def test_kubectl_delete_prints_deleted_for_every_answer_shape(haru: Cluster) -> None:
    haru.kubectl("create", "namespace", "kd")
    manifests = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: kd-class}
spec: {}
---
apiVersion: v1
kind: Service
metadata: {name: kd-svc, namespace: kd}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: kd-held, namespace: kd, finalizers: [haru.test/hold]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: kd-t1, namespace: kd}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: kd-t2, namespace: kd}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}}
"""
    haru.kubectl("apply", "-f", "-", input=manifests)

    out = haru.kubectl("delete", "deviceclass", "kd-class", "--dry-run=server").stdout
    assert 'deviceclass.resource.k8s.io "kd-class" deleted (server dry run)' in out
    out = haru.kubectl("delete", "deviceclass", "kd-class").stdout
    assert 'deviceclass.resource.k8s.io "kd-class" deleted' in out
    out = haru.kubectl("delete", "-n", "kd", "service", "kd-svc", "--wait=false").stdout
    assert 'service "kd-svc" deleted' in out
    out = haru.kubectl("delete", "-n", "kd", "configmap", "kd-held", "--wait=false").stdout
    assert 'configmap "kd-held" deleted' in out
    assert haru.kubectl("get", "-n", "kd", "configmap", "kd-held", "-o",
                        "jsonpath={.metadata.deletionTimestamp}").stdout
    out = haru.kubectl("delete", "-n", "kd", "resourceclaimtemplates", "--all").stdout
    assert 'resourceclaimtemplate.resource.k8s.io "kd-t1" deleted' in out
    assert 'resourceclaimtemplate.resource.k8s.io "kd-t2" deleted' in out
    assert haru.kubectl("get", "-n", "kd", "resourceclaimtemplates", "-o", "name").stdout == ""
    haru.kubectl("patch", "-n", "kd", "configmap", "kd-held", "--type=merge", "-p",
                 '{"metadata":{"finalizers":null}}')
    assert haru.kubectl("get", "-n", "kd", "configmap", "kd-held", check=False).returncode != 0
