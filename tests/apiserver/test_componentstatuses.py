"""ComponentStatus: probed on every read, listed and got by name, as tables, with the deprecation Warning."""

from __future__ import annotations

import sys

from apiserver import componentstatuses
from cluster import supervisor
from tests.apiserver.test_health import close_store

_WARNING = "299 - \"v1 ComponentStatus is deprecated in v1.19+\""
_TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


async def test_the_store_is_listed_as_etcd_0_and_got_by_name(api):
    status, body, headers = await api.request("GET", "/api/v1/componentstatuses")
    assert status == 200 and headers["Warning"] == _WARNING
    assert body == {"kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {}, "items": [
        {"metadata": {"name": "etcd-0"}, "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]}]}
    status, body, headers = await api.request("GET", "/api/v1/componentstatuses/etcd-0")
    assert status == 200 and headers["Warning"] == _WARNING
    assert body == {"kind": "ComponentStatus", "apiVersion": "v1", "metadata": {"name": "etcd-0"},
                    "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]}


async def test_an_unknown_component_is_upstreams_plain_500(api):
    status, body, _ = await api.request("GET", "/api/v1/componentstatuses/scheduler")
    # StatusReasonUnknown is "", and metav1.Status.reason is omitempty: Go writes no reason key.
    assert status == 500 and body["message"] == "Component not found: scheduler" and "reason" not in body


async def test_registered_components_report_what_their_probe_finds(api):
    state = {"answer": ("True", "ok", "")}

    async def controllers() -> tuple[str, str, str]:
        return state["answer"]

    async def broken() -> tuple[str, str, str]:
        raise ConnectionError("no answer")

    componentstatuses.register(api.running.server, "controller-manager", controllers)
    componentstatuses.register(api.running.server, "scheduler", broken)
    status, body, _ = await api.request("GET", "/api/v1/componentstatuses", headers={"Accept": _TABLE})
    assert status == 200 and body["kind"] == "Table"
    assert [c["name"] for c in body["columnDefinitions"]] == ["Name", "Status", "Message", "Error"]
    assert [r["cells"] for r in body["rows"]] == [
        ["etcd-0", "Healthy", "ok", ""], ["controller-manager", "Healthy", "ok", ""],
        ["scheduler", "Unhealthy", "", "ConnectionError: no answer"]]

    state["answer"] = ("False", "", "controllers exited with code 1 (restarts: 2)")
    status, body, _ = await api.request("GET", "/api/v1/componentstatuses/controller-manager")
    assert body["conditions"] == [{"type": "Healthy", "status": "False",
                                   "error": "controllers exited with code 1 (restarts: 2)"}]
    status, body, _ = await api.request("GET", "/api/v1/componentstatuses?fieldSelector=metadata.name%3Dscheduler")
    assert [i["metadata"]["name"] for i in body["items"]] == ["scheduler"]
    assert body["items"][0]["conditions"][0]["status"] == "Unknown"


async def test_the_store_reports_a_failed_read(api):
    await close_store(api)
    status, body, _ = await api.request("GET", "/api/v1/componentstatuses/etcd-0")
    assert status == 200 and body["conditions"] == [
        {"type": "Healthy", "status": "False", "error": "StorageUnavailable: the store is closed"}]


async def test_only_get_and_list_are_served(api):
    status, body, _ = await api.request("POST", "/api/v1/componentstatuses", json={"metadata": {"name": "x"}})
    assert status == 405 and body["reason"] == "MethodNotAllowed"
    status, _, _ = await api.request("GET", "/api/v1/componentstatuses?watch=true")
    assert status == 405


async def test_a_co_process_is_healthy_while_it_runs_and_unhealthy_once_it_exited():
    running = await supervisor.CoProcess("sleeper", [sys.executable, "-c", "import time; time.sleep(60)"]).start()
    exited = await supervisor.CoProcess("crasher", [sys.executable, "-c", "raise SystemExit(3)"],
                                        backoff_initial=60).start()
    try:
        assert await running.health() == ("True", "ok", "")
        assert exited.process is not None
        await exited.process.wait()  # now in its restart backoff
        assert await exited.health() == ("False", "", "crasher exited with code 3 (restarts: 0)")
    finally:
        await running.stop()
        await exited.stop()


async def test_embedded_controllers_are_healthy_once_their_caches_fill(api):
    controllers = await supervisor.start_controllers(url=api.url, embedded=True)
    try:
        assert await controllers.health() == ("True", "ok", "")
    finally:
        await controllers.stop()
