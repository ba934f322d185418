"""APF in a running API server: the default objects kept, classification headers, 429, watches, the flag.

An in-process server (`runner.start`) with an admin bearer token and AlwaysAllow, so a caller is
who `Impersonate-User` says and every request reaches its handler. To make a level full without
timing, the test itself holds the level's seats through the server's own `FlowControl`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, AsyncIterator

import aiohttp
import msgspec
import pytest
import pytest_asyncio

from apiserver import app as app_module, runner
from apiserver.auth import User
from apiserver.requestinfo import parse
from apiserver.flowcontrol import defaults, maintenance

TOKEN = "apf-test-admin"
FC = "/apis/flowcontrol.apiserver.k8s.io/v1"


class Server:
    def __init__(self, running: Any, session: aiohttp.ClientSession) -> None:
        self.running = running
        self.session = session

    @property
    def fc(self) -> Any:
        return self.running.server.extra[app_module.FLOW_CONTROL]

    async def request(self, method: str, path: str, *, json: Any = None, user: str | None = None,
                      headers: dict[str, str] | None = None) -> tuple[int, Any, Any]:
        h = {"Authorization": f"Bearer {TOKEN}", **(headers or {})}
        if user:
            h["Impersonate-User"] = user
        async with self.session.request(method, self.running.url + path, json=json, headers=h) as resp:
            raw = await resp.read()
            try:
                body: Any = msgspec.json.decode(raw)
            except msgspec.DecodeError:
                body = raw.decode()
            return resp.status, body, resp.headers

    async def until(self, check: Any, what: str) -> Any:
        for _ in range(500):
            value = await check()
            if value:
                return value
            await asyncio.sleep(0.01)
        raise AssertionError(f"timed out waiting for {what}")


async def _start(tmp_path: Path, **kw: Any) -> AsyncIterator[Server]:
    running = await runner.start(str(tmp_path / "data"), port=0, admin_token=TOKEN, authorization_mode="AlwaysAllow",
                                 **kw)
    session = aiohttp.ClientSession()
    try:
        yield Server(running, session)
    finally:
        await session.close()
        await running.stop()


@pytest_asyncio.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    async for s in _start(tmp_path):
        yield s


async def test_upstreams_default_objects_exist_marked_autoupdate_and_not_dangling(server):
    code, schemas, _ = await server.request("GET", f"{FC}/flowschemas")
    assert code == 200
    names = {s["metadata"]["name"] for s in schemas["items"]}
    assert names == set(defaults.MANDATORY_SCHEMAS) | set(defaults.SUGGESTED_SCHEMAS)
    for item in schemas["items"]:
        assert item["metadata"]["annotations"][defaults.AUTOUPDATE] == "true"
        dangling = [c for c in item["status"]["conditions"] if c["type"] == "Dangling"]
        assert dangling and dangling[0]["status"] == "False" and dangling[0]["reason"] == "Found"
    code, levels, _ = await server.request("GET", f"{FC}/prioritylevelconfigurations")
    assert {lv["metadata"]["name"] for lv in levels["items"]} == {
        "exempt", "catch-all", "system", "node-high", "leader-election", "workload-high", "workload-low", "global-default"}
    gd = next(lv for lv in levels["items"] if lv["metadata"]["name"] == "global-default")
    assert gd["spec"]["limited"] == {"nominalConcurrencyShares": 20, "lendablePercent": 50, "limitResponse": {
        "type": "Queue", "queuing": {"queues": 128, "handSize": 6, "queueLengthLimit": 50}}}


async def test_deleted_defaults_come_back_and_a_changed_mandatory_spec_is_put_back(server):
    assert (await server.request("DELETE", f"{FC}/flowschemas/global-default"))[0] == 200
    assert (await server.request("DELETE", f"{FC}/prioritylevelconfigurations/catch-all"))[0] == 200

    async def back():
        a = await server.request("GET", f"{FC}/flowschemas/global-default")
        b = await server.request("GET", f"{FC}/prioritylevelconfigurations/catch-all")
        return a[0] == 200 and b[0] == 200
    await server.until(back, "the deleted defaults to be recreated")
    patch = {"spec": {"limited": {"nominalConcurrencyShares": 99}}}
    code, _, _ = await server.request("PATCH", f"{FC}/prioritylevelconfigurations/catch-all", json=patch,
                                      headers={"Content-Type": "application/merge-patch+json"})
    assert code == 200

    async def restored():
        _, obj, _ = await server.request("GET", f"{FC}/prioritylevelconfigurations/catch-all")
        return obj["spec"]["limited"]["nominalConcurrencyShares"] == 5
    await server.until(restored, "catch-all's shares to be put back")


async def test_a_suggested_object_keeps_the_admins_spec_once_autoupdate_is_false(server):
    merge = {"Content-Type": "application/merge-patch+json"}
    own = {"metadata": {"annotations": {defaults.AUTOUPDATE: "false"}},
           "spec": {"limited": {"nominalConcurrencyShares": 7}}}
    assert (await server.request("PATCH", f"{FC}/prioritylevelconfigurations/workload-low", json=own,
                                 headers=merge))[0] == 200
    auto = {"spec": {"limited": {"nominalConcurrencyShares": 8}}}
    assert (await server.request("PATCH", f"{FC}/prioritylevelconfigurations/workload-high", json=auto,
                                 headers=merge))[0] == 200

    async def settled():
        _, high, _ = await server.request("GET", f"{FC}/prioritylevelconfigurations/workload-high")
        return high["spec"]["limited"]["nominalConcurrencyShares"] == 40  # "true": put back
    await server.until(settled, "workload-high's spec to be put back")
    _, low, _ = await server.request("GET", f"{FC}/prioritylevelconfigurations/workload-low")
    assert low["spec"]["limited"]["nominalConcurrencyShares"] == 7
    assert server.fc.config.levels["workload-low"].shares == 7  # and it is what the filter uses


def test_an_unannotated_suggested_object_becomes_false_once_changed_and_true_while_untouched():
    spec = defaults.SUGGESTED_LEVELS["system"]
    changed = {"metadata": {"name": "system", "generation": 3}, "spec": {"type": "Limited", "limited": {}}}
    kept = maintenance.kept_spec(changed, spec, mandatory=False)
    assert kept["metadata"]["annotations"][defaults.AUTOUPDATE] == "false" and kept["spec"]["limited"] == {}
    pristine = {"metadata": {"name": "system", "generation": 1}, "spec": {"type": "Limited", "limited": {}}}
    kept = maintenance.kept_spec(pristine, spec, mandatory=False)
    assert kept["metadata"]["annotations"][defaults.AUTOUPDATE] == "true" and kept["spec"] == spec


async def test_a_flow_schema_naming_a_missing_level_is_dangling_until_the_level_exists(server):
    schema = {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema", "metadata": {"name": "mine"},
              "spec": {"priorityLevelConfiguration": {"name": "mine"}, "matchingPrecedence": 50,
                       "distinguisherMethod": {"type": "ByUser"},
                       "rules": [{"subjects": [{"kind": "User", "user": {"name": "jane"}}],
                                  "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                                     "namespaces": ["*"], "clusterScope": True}]}]}}
    assert (await server.request("POST", f"{FC}/flowschemas", json=schema))[0] == 201

    async def dangling(status):
        _, obj, _ = await server.request("GET", f"{FC}/flowschemas/mine")
        found = [c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == "Dangling"]
        return found[0] if found and found[0]["status"] == status else None
    condition = await server.until(lambda: dangling("True"), "Dangling=True")
    assert condition["reason"] == "NotFound"
    assert condition["message"] == ('This FlowSchema references the PriorityLevelConfiguration object named "mine" '
                                    "but there is no such object")
    _, _, headers = await server.request("GET", "/api/v1/namespaces/default/configmaps", user="jane")
    _, gd, _ = await server.request("GET", f"{FC}/flowschemas/global-default")
    assert headers["X-Kubernetes-PF-FlowSchema-UID"] == gd["metadata"]["uid"]  # skipped while dangling
    level = {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
             "metadata": {"name": "mine"}, "spec": {"type": "Limited", "limited": {
                 "nominalConcurrencyShares": 1, "limitResponse": {"type": "Reject"}}}}
    assert (await server.request("POST", f"{FC}/prioritylevelconfigurations", json=level))[0] == 201
    assert (await server.until(lambda: dangling("False"), "Dangling=False"))["reason"] == "Found"


async def test_responses_carry_the_flow_schema_and_priority_level_uids(server):
    _, exempt, _ = await server.request("GET", f"{FC}/flowschemas/exempt")
    _, exempt_level, _ = await server.request("GET", f"{FC}/prioritylevelconfigurations/exempt")
    code, _, headers = await server.request("GET", "/api/v1/namespaces")
    assert code == 200
    assert headers["X-Kubernetes-PF-FlowSchema-UID"] == exempt["metadata"]["uid"]
    assert headers["X-Kubernetes-PF-PriorityLevel-UID"] == exempt_level["metadata"]["uid"]
    code, _, headers = await server.request("GET", "/api/v1/namespaces/nope/configmaps/nope", user="jane")
    assert code == 404  # errors carry them too
    _, gd, _ = await server.request("GET", f"{FC}/prioritylevelconfigurations/global-default")
    assert headers["X-Kubernetes-PF-PriorityLevel-UID"] == gd["metadata"]["uid"]


async def test_a_full_reject_level_answers_429_with_retry_after_and_upstreams_text(server):
    level = server.fc.config.levels["catch-all"].state
    held = await level.acquire(0, level.limit)  # the level is full
    schema = {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema", "metadata": {"name": "to-catch-all"},
              "spec": {"priorityLevelConfiguration": {"name": "catch-all"}, "matchingPrecedence": 20,
                       "rules": [{"subjects": [{"kind": "User", "user": {"name": "jane"}}],
                                  "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                                     "namespaces": ["*"], "clusterScope": True}]}]}}
    assert (await server.request("POST", f"{FC}/flowschemas", json=schema))[0] == 201

    async def classified():
        found = server.fc.config.classify(User("jane", ("system:authenticated",)),
                                          parse("GET", "/api/v1/namespaces/default/configmaps"))
        return found.schema.name == "to-catch-all"
    await server.until(classified, "the new FlowSchema to be digested")
    code, body, headers = await server.request("GET", "/api/v1/namespaces/default/configmaps", user="jane")
    assert code == 429
    assert body == "Too many requests, please try again later.\n"
    assert headers["Retry-After"] == "1" and headers["Content-Type"].startswith("text/plain")
    assert "X-Kubernetes-PF-FlowSchema-UID" in headers
    assert server.fc.config.stats[("to-catch-all", "catch-all")].rejected == {"concurrency-limit": 1}
    held.release()
    assert (await server.request("GET", "/api/v1/namespaces/default/configmaps", user="jane"))[0] == 200
    _, text, _ = await server.request("GET", "/metrics")
    assert ('apiserver_flowcontrol_rejected_requests_total{flow_schema="to-catch-all",priority_level="catch-all",'
            'reason="concurrency-limit"} 1') in text
    assert 'apiserver_flowcontrol_nominal_limit_seats{priority_level="global-default"} 49' in text


async def test_a_request_that_waits_past_the_limit_in_a_queue_gets_429(server):
    level = server.fc.config.levels["global-default"].state
    level.wait_limit = 0.05
    held = await level.acquire(0, level.limit)
    code, body, _ = await server.request("GET", "/api/v1/namespaces/default/configmaps", user="jane")
    assert code == 429 and body.startswith("Too many requests")
    assert server.fc.config.stats[("global-default", "global-default")].rejected == {"time-out": 1}
    held.release()


async def test_a_watch_gives_its_seats_back_once_its_initial_events_are_sent(server):
    for i in range(250):  # 3 seats' worth of objects for the watch's initial events
        await server.request("POST", "/api/v1/namespaces/default/configmaps", json={"metadata": {"name": f"c{i}"}})
    level = server.fc.config.levels["global-default"].state
    headers = {"Authorization": f"Bearer {TOKEN}", "Impersonate-User": "jane"}
    async with server.session.get(server.running.url + "/api/v1/namespaces/default/configmaps?watch=true",
                                  headers=headers) as resp:
        assert resp.status == 200
        for _ in range(250):
            await resp.content.readline()
        await server.until(lambda: asyncio.sleep(0, level.executing_seats == 0), "the watch's seats to be released")
        stats = server.fc.config.stats[("global-default", "global-default")]
        assert stats.dispatched >= 1 and stats.executing == 0


async def test_with_priority_and_fairness_off_nothing_is_classified_or_created(tmp_path):
    async for off in _start(tmp_path, priority_and_fairness=False):
        code, body, headers = await off.request("GET", f"{FC}/flowschemas")
        assert code == 200 and body["items"] == []
        assert "X-Kubernetes-PF-FlowSchema-UID" not in headers
        assert app_module.FLOW_CONTROL not in off.running.server.extra
