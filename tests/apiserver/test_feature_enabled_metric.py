"""/metrics carries kube-apiserver's `kubernetes_feature_enabled` gauge, one line per registered gate."""

from __future__ import annotations

import re

import aiohttp

from apiserver import runner
from apiserver.features import REGISTERED

_LINE = re.compile(r'^kubernetes_feature_enabled\{name="([^"]+)",stage="([A-Z]*)"\} ([01])$', re.M)


async def test_every_registered_gate_is_reported_with_its_stage(api) -> None:
    status, text, headers = await api.request("GET", "/metrics")
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    found = {name: (stage, value) for name, stage, value in _LINE.findall(text)}
    assert set(found) == set(REGISTERED)
    assert found["DRAPrioritizedList"][1] == "1"
    ga = next(name for name, spec in REGISTERED.items() if spec.stage == "ga")
    assert found[ga][0] == ""
    assert "# TYPE kubernetes_feature_enabled gauge" in text


async def test_a_gate_switched_off_reads_zero(tmp_path) -> None:
    running = await runner.start(str(tmp_path / "data"), port=0, feature_gates="DRAPrioritizedList=false")
    try:
        async with aiohttp.ClientSession() as session, session.get(running.url + "/metrics") as resp:
            text = await resp.text()
    finally:
        await running.stop()
    found = {name: value for name, _, value in _LINE.findall(text)}
    assert found["DRAPrioritizedList"] == "0" and found["DRAAdminAccess"] == "1"
