"""The kubelet endpoint's documents, computed from the runtime view: /pods, /healthz, /configz,
/spec (cAdvisor MachineInfo), /stats/summary (the summary API's shape) and /metrics (the kubelet's
metric names, with the counts they should have).
"""

from __future__ import annotations

import json

import aiohttp
import pytest

from nodes.endpoint import info
from tests.nodes.endpoint_fixture import Kubelet
from tests.nodes.fake_runtime import FakeNode, running_status


async def test_pods_lists_what_the_kubelet_runs(kubelet: Kubelet) -> None:
    kubelet.node.add("web", ["c"])
    kubelet.node.add("db", ["pg"], namespace="data")

    status, body = await kubelet.get("/pods")

    listed = json.loads(body)
    assert (status, listed["kind"], listed["apiVersion"]) == (200, "PodList", "v1")
    assert sorted((p["metadata"]["namespace"], p["metadata"]["name"]) for p in listed["items"]) == [
        ("data", "db"), ("default", "web")]


async def test_spec_is_machine_info_from_the_node(kubelet: Kubelet) -> None:
    status, body = await kubelet.get("/spec/")

    spec = json.loads(body)
    assert (spec["num_cores"], spec["memory_capacity"]) == (8, 32 * 2**30)
    assert (spec["machine_id"], spec["system_uuid"], spec["boot_id"]) == ("m-1", "s-1", "b-1")
    assert len(spec["topology"][0]["cores"]) == 8


async def test_stats_summary_sums_running_containers_into_pods_and_the_node(kubelet: Kubelet) -> None:
    pod = kubelet.node.add("web", ["a", "b"])
    pod.by_name["b"].cpu, pod.by_name["b"].memory = 50_000_000, 2**20
    kubelet.node.add("done", ["x"], status=running_status(["x"])).by_name["x"].stop()

    summary = json.loads((await kubelet.get("/stats/summary"))[1])

    node = summary["node"]
    assert (node["nodeName"], node["cpu"]["usageNanoCores"]) == ("node-a", 300_000_000)
    assert node["memory"]["workingSetBytes"] == 65 * 2**20
    assert node["memory"]["availableBytes"] == 32 * 2**30 - 65 * 2**20
    web = next(p for p in summary["pods"] if p["podRef"]["name"] == "web")
    assert web["podRef"] == {"name": "web", "namespace": "default", "uid": "uid-web"}
    assert [c["name"] for c in web["containers"]] == ["a", "b"]
    assert web["memory"]["workingSetBytes"] == 65 * 2**20
    assert next(p for p in summary["pods"] if p["podRef"]["name"] == "done")["containers"] == []


async def test_metrics_carry_the_kubelets_names(kubelet: Kubelet) -> None:
    kubelet.node.add("web", ["c"])
    await kubelet.get("/healthz")

    status, body = await kubelet.get("/metrics")

    assert status == 200
    lines = body.splitlines()
    assert 'kubelet_node_name{node="node-a"} 1' in lines
    assert "kubelet_running_pods 1" in lines
    assert 'kubelet_running_containers{container_state="running"} 1' in lines
    assert ('kubelet_http_requests_total{long_running="false",method="GET",path="healthz",server_type="readwrite"} 1'
            in lines)
    assert "# TYPE kubelet_http_requests_total counter" in lines
    assert any(line.startswith('kubernetes_build_info{git_version="v1.36.3",major="1",minor="36"') for line in lines)


def test_sample_values_are_written_as_gos_shortest_g_format() -> None:
    assert [info.sample_value(v) for v in (0, 1, 123456, 1234567, 67108864, 0.25, 0.00001, 12.5, -3)] == [
        "0", "1", "123456", "1.234567e+06", "6.7108864e+07", "0.25", "1e-05", "12.5", "-3"]


def test_quantities_read_as_kube_writes_them() -> None:
    assert [info.quantity(q) for q in ("8", "500m", "32Gi", "1k", "100M", None)] == [
        8, 0.5, 32 * 2**30, 1000, 100_000_000, 0]


async def test_logs_lists_the_node_log_folder_as_a_file_server_does(kubelet: Kubelet) -> None:
    listing = '<!doctype html>\n<meta name="viewport" content="width=device-width">\n<pre>\n{}</pre>\n'

    assert await kubelet.get("/logs/") == (200, listing.format('<a href="kubelet.log">kubelet.log</a>\n'
                                                               '<a href="pods/">pods/</a>\n'))
    assert await kubelet.get("/logs/pods/") == (200, listing.format('<a href="default_web/">default_web/</a>\n'))
    assert await kubelet.get("/logs/kubelet.log") == (200, "I1201 started\n")
    assert await kubelet.get("/logs/missing.log") == (404, "404 page not found")
    status, _ = await kubelet.get("/logs", allow_redirects=False)
    assert status == 301


async def test_healthz_has_the_kubelets_checks(kubelet: Kubelet) -> None:
    assert await kubelet.get("/healthz") == (200, "ok")
    assert await kubelet.get("/healthz/syncloop") == (200, "ok")
    assert await kubelet.get("/healthz/nope") == (404, "404 page not found")
    assert await kubelet.get("/healthz?verbose") == (200, "[+]ping ok\n[+]log ok\n[+]syncloop ok\nhealthz check passed\n")


async def test_nodes_on_their_own_loopback_addresses_share_a_port(kubelet: Kubelet) -> None:
    other = FakeNode(name="node-b")
    other.add("db", ["pg"])
    port = await kubelet.endpoint.serve(other, kubelet.port, address="127.0.0.2")

    assert port == kubelet.port
    async with kubelet.session.get(f"https://127.0.0.2:{port}/pods") as resp:
        assert [p["metadata"]["name"] for p in (await resp.json())["items"]] == ["db"]
    kubelet.node.add("web", ["c"])
    assert [p["metadata"]["name"] for p in json.loads((await kubelet.get("/pods"))[1])["items"]] == ["web"]
    await kubelet.endpoint.remove("node-b")
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=False)) as fresh:
        with pytest.raises(aiohttp.ClientConnectionError):
            await fresh.get(f"https://127.0.0.2:{port}/pods")


async def test_resource_metrics_are_what_metrics_server_reads(kubelet: Kubelet) -> None:
    kubelet.node.add("web", ["c"])

    status, body = await kubelet.get("/metrics/resource")

    assert status == 200
    samples = {line.rsplit(" ", 2)[0]: line.rsplit(" ", 2)[1] for line in body.splitlines()
               if line and not line.startswith("#") and line.count(" ") == 2}
    assert samples['container_memory_working_set_bytes{container="c",namespace="default",pod="web"}'] == "6.7108864e+07"
    assert samples['pod_memory_working_set_bytes{namespace="default",pod="web"}'] == "6.7108864e+07"
    assert "node_cpu_usage_seconds_total" in samples
    assert "resource_scrape_error 0" in body.splitlines()
    assert "# TYPE container_cpu_usage_seconds_total counter" in body
