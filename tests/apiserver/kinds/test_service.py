"""Services: defaults, allocation from the pure allocator, immutable cluster IP, 1.36 warnings."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest

from apiserver.kinds import service, service_allocation
from tests.apiserver.kinds.writes import create, created, edited, messages, strategy, update


def services():
    return strategy("", "services")


def a_service(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"selector": {"app": "web"}, "ports": [{"port": 80}]}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"}, "spec": body}


def test_a_cluster_ip_service_gets_the_upstream_defaults_and_an_empty_load_balancer_status():
    svc = created(services(), a_service())
    assert svc["spec"] == {
        "selector": {"app": "web"}, "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
        "sessionAffinity": "None", "type": "ClusterIP", "internalTrafficPolicy": "Cluster",
        "ipFamilyPolicy": "SingleStack", "ipFamilies": ["IPv4"],
    }
    assert svc["status"] == {"loadBalancer": {}}
    assert "generation" not in svc["metadata"]


def test_a_load_balancer_gets_traffic_policy_and_node_port_allocation_defaults():
    spec = created(services(), a_service(type="LoadBalancer"))["spec"]
    assert (spec["externalTrafficPolicy"], spec["allocateLoadBalancerNodePorts"]) == ("Cluster", True)


def test_client_ip_affinity_gets_the_three_hour_timeout():
    spec = created(services(), a_service(sessionAffinity="ClientIP"))["spec"]
    assert spec["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": 10800}}


def test_allocation_fills_cluster_ip_and_node_ports_from_what_is_free():
    s = services()
    svc = created(s, a_service(type="NodePort", ports=[{"name": "a", "port": 80}, {"name": "b", "port": 81, "nodePort": 30100}]))
    assert s.allocate(svc, used_cluster_ips={"10.96.0.1", "10.96.1.1"}, used_node_ports={30086}) == []
    assert (svc["spec"]["clusterIP"], svc["spec"]["clusterIPs"]) == ("10.96.1.2", ["10.96.1.2"])
    assert [p["nodePort"] for p in svc["spec"]["ports"]] == [30087, 30100]


@pytest.mark.parametrize("spec, expected", [
    ({"clusterIP": "10.96.0.10"},
     ['spec.clusterIPs: Invalid value: ["10.96.0.10"]: failed to allocate IP 10.96.0.10: provided IP is already allocated']),
    ({"clusterIP": "192.168.0.10"},
     ['spec.clusterIPs: Invalid value: ["192.168.0.10"]: failed to allocate IP 192.168.0.10: the provided IP '
      "(192.168.0.10) is not in the valid range. The range of valid IPs is 10.96.0.0/12"]),
    ({"type": "NodePort", "ports": [{"port": 80, "nodePort": 80}]},
     ["spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767"]),
    ({"type": "NodePort", "ports": [{"port": 80, "nodePort": 30500}]},
     ["spec.ports[0].nodePort: Invalid value: 30500: provided port is already allocated"]),
], ids=["a taken cluster IP", "a cluster IP outside the range", "a node port outside the range", "a taken node port"])
def test_allocation_refuses_what_cannot_be_had(spec, expected):
    s = services()
    svc = created(s, a_service(**spec))
    assert messages(s.allocate(svc, used_cluster_ips={"10.96.0.10"}, used_node_ports={30500})) == expected


def test_headless_and_external_name_services_get_no_cluster_ip():
    s = services()
    headless = created(s, a_service(clusterIP="None"))
    external = created(s, {"metadata": {"name": "ext", "namespace": "default"}, "spec": {"type": "ExternalName", "externalName": "example.com"}})
    for svc in (headless, external):
        s.allocate(svc, used_cluster_ips=set(), used_node_ports=set())
    assert headless["spec"]["clusterIPs"] == ["None"]
    assert "clusterIP" not in external["spec"] and "ipFamilies" not in external["spec"]


def test_the_allocator_skips_the_static_band_and_then_uses_it():
    assert service_allocation.allocate_cluster_ip({"10.96.0.1"}) == "10.96.1.1"
    small = ipaddress.ip_network("192.0.2.0/24")  # 254 addresses: a static band of 16
    dynamic_band = {f"192.0.2.{i}" for i in range(17, 255)}
    assert service_allocation.allocate_cluster_ip(set(), small) == "192.0.2.17"
    assert service_allocation.allocate_cluster_ip(dynamic_band | {"192.0.2.1"}, small) == "192.0.2.2"
    assert service_allocation.allocate_cluster_ip({f"192.0.2.{i}" for i in range(1, 255)}, small) is None
    assert service_allocation.allocate_node_port(set(range(30086, 32768))) == 30000


def test_used_values_collects_cluster_ips_and_node_ports_of_stored_services():
    stored = [{"spec": {"clusterIPs": ["10.96.0.1"], "ports": [{"nodePort": 30001}]}},
              {"spec": {"clusterIPs": ["None"], "healthCheckNodePort": 30002}}]
    assert service.used_values(stored) == ({"10.96.0.1"}, {30001, 30002})


def test_an_update_without_cluster_ip_keeps_the_allocated_one_and_node_ports():
    s = services()
    old = created(s, a_service(type="NodePort"))
    s.allocate(old, used_cluster_ips=set(), used_node_ports=set())
    new = a_service(type="NodePort")
    assert update(s, new, old) == []
    assert new["spec"]["clusterIP"] == old["spec"]["clusterIP"]
    assert new["spec"]["ports"][0]["nodePort"] == old["spec"]["ports"][0]["nodePort"]


def test_a_cluster_ip_may_not_change_once_set():
    s = services()
    old = created(s, a_service(clusterIP="10.96.0.20"))
    new = edited(old)
    new["spec"]["clusterIP"], new["spec"]["clusterIPs"] = "10.96.0.21", ["10.96.0.21"]
    assert messages(update(s, new, old)) == ['spec.clusterIPs[0]: Invalid value: ["10.96.0.21"]: may not change once set']


def test_changing_to_cluster_ip_drops_node_ports_the_client_kept():
    s = services()
    old = created(s, a_service(type="NodePort"))
    s.allocate(old, used_cluster_ips=set(), used_node_ports=set())
    new = edited(old)
    new["spec"]["type"] = "ClusterIP"
    new["spec"].pop("externalTrafficPolicy")
    assert update(s, new, old) == []
    assert "nodePort" not in new["spec"]["ports"][0]


@pytest.mark.parametrize("spec, expected", [
    ({"ports": []}, ["spec.ports: Required value"]),
    ({"ports": [{"port": 80}, {"port": 81}]},
     ["spec.ports[0].name: Required value", "spec.ports[1].name: Required value"]),
    ({"type": "Magic"},
     ['spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"']),
    ({"externalIPs": ["127.0.0.1"]},
     ['spec.externalIPs[0]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)']),
    ({"externalIPs": ["010.1.2.3"]}, ['spec.externalIPs[0]: Invalid value: "010.1.2.3": must not have leading 0s']),
    ({"ports": [{"port": 80, "nodePort": 30001}]},
     ["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"]),
    ({"ipFamilyPolicy": "RequireDualStack"},
     ['spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services']),
    ({"loadBalancerSourceRanges": ["10.0.0.0/8"]},
     ["spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is 'LoadBalancer'"]),
], ids=["ports are required", "several ports need names", "type is an enum", "external IPs may not be loopback",
        "strict IPs reject leading zeros", "a ClusterIP service has no node ports", "this cluster is single-stack",
        "source ranges are for load balancers"])
def test_service_validation(spec, expected):
    assert messages(create(services(), a_service(**spec))) == expected


def test_service_names_are_dns_1035_labels():
    svc = a_service()
    svc["metadata"]["name"] = "1web"
    causes = create(services(), svc)
    assert [c["field"] for c in causes] == ["metadata.name"]
    assert "a DNS-1035 label must consist of lower case alphanumeric characters" in causes[0]["message"]


@pytest.mark.parametrize("spec, expected", [
    ({"externalIPs": ["1.2.3.4"]}, ["spec.externalIPs is deprecated and may no longer be implemented in some clusters"]),
    ({"clusterIP": "None", "externalIPs": ["1.2.3.4"]}, ["spec.externalIPs is ignored for headless services"]),
    ({"externalName": "x.example.com"}, ['spec.externalName is ignored when spec.type is not "ExternalName"']),
    ({"trafficDistribution": "PreferClose"}, ['spec.trafficDistribution: "PreferClose" is deprecated; use "PreferSameZone"']),
    ({}, []),
], ids=["external IPs are deprecated in 1.36", "headless services ignore them", "externalName needs its type",
        "PreferClose is deprecated", "a plain service has no warnings"])
def test_service_warnings(spec, expected):
    s = services()
    svc = created(s, a_service(**spec))
    assert s.warnings(svc) == expected


def test_on_update_the_service_s_own_values_are_not_in_use_by_others():
    s = services()
    old = created(s, a_service(type="NodePort", clusterIP="10.96.0.50", ports=[{"port": 80, "nodePort": 30050}]))
    new = edited(old)
    new["spec"]["ports"].append({"name": "b", "port": 81})
    new["spec"]["ports"][0]["name"] = "a"
    assert update(s, new, old) == []
    used_ips, used_ports = service.used_values([old, {"spec": {"clusterIPs": ["10.96.0.60"], "ports": [{"nodePort": 30086}]}}])
    assert s.allocate(new, used_cluster_ips=used_ips, used_node_ports=used_ports, old=old) == []
    assert [p["nodePort"] for p in new["spec"]["ports"]] == [30050, 30087]
