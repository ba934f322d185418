"""A client that closes its watch ends it quietly: no error log, no 500 in the request metrics."""

from __future__ import annotations

import asyncio
import logging

import aiohttp


async def _watch_requests(api) -> list[str]:
    _, text, _ = await api.request("GET", "/metrics")
    return [line for line in text.splitlines()
            if line.startswith("apiserver_request_total{") and 'verb="WATCH"' in line and 'resource="configmaps"' in line]


async def test_closing_a_watch_logs_nothing(api, caplog):
    caplog.set_level(logging.DEBUG, logger="haru")
    async with aiohttp.ClientSession() as session:
        resp = await session.get(api.url + "/api/v1/namespaces/default/configmaps?watch=true")
        assert resp.status == 200
        await api.request("POST", "/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "first"}})
        assert b'"type":"ADDED"' in await resp.content.readline()
        resp.close()  # the client hangs up
    # More events make the server write to the closed connection, then find it gone.
    for i in range(400):
        if await _watch_requests(api):
            break
        await api.request("POST", "/api/v1/namespaces/default/configmaps", json={"metadata": {"name": f"cm-{i}"}})
        await asyncio.sleep(0.025)
    finished = await _watch_requests(api)
    assert finished, "the watch handler never finished"
    assert not any('code="500"' in line for line in finished), finished
    problems = [r for r in caplog.records if r.levelno >= logging.WARNING and r.name.startswith("haru")]
    assert problems == [], [r.getMessage() for r in problems]
