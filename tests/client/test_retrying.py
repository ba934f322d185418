"""client/retrying.py and RestClient's retries, against a small aiohttp server that misbehaves."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncio
import json

import aiohttp
import pytest
import pytest_asyncio

from client import errors, retrying
from client.kubeconfig import Config
from client.resources import CONFIGMAPS
from client.rest import RestClient

FAST = retrying.Retry(attempts=3, initial=0.001, maximum=0.002, retry_after_cap=0.01)


@pytest.mark.parametrize("method, kwargs, expected", [
    ("POST", {"status": 429, "retry_after": "1"}, 0.01),
    ("POST", {"status": 503, "retry_after": "0"}, 0.0),
    ("POST", {"status": 500}, None),
    ("GET", {"status": 500}, "backoff"),
    ("GET", {"transport_error": True}, "backoff"),
    ("PUT", {"transport_error": True}, None),
    ("GET", {"status": 404}, None),
    ("POST", {"status": 429}, "backoff"),
])
def test_the_policy(method, kwargs, expected) -> None:
    delay = FAST.delay(0, method, **kwargs)
    if expected == "backoff":
        assert delay is not None and 0 < delay <= 0.002
    else:
        assert delay == expected


def test_it_gives_up_after_its_attempts() -> None:
    assert FAST.delay(3, "GET", status=429, retry_after="1") is None
    assert retrying.NEVER.delay(0, "GET", status=429, retry_after="1") is None


class Flaky:
    """A raw HTTP/1.1 server: each connection gets the next answer ("drop" closes it unanswered)."""

    def __init__(self) -> None:
        self.answers: list[tuple[int, dict[str, str], dict] | str] = []
        self.calls: list[str] = []
        self.url = ""

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        self.calls.append(lines[0].split()[0])
        length = next((int(line.split(":")[1]) for line in lines if line.lower().startswith("content-length:")), 0)
        if length:
            await reader.readexactly(length)
        answer = self.answers.pop(0) if self.answers else (200, {}, {"kind": "ConfigMap", "metadata": {"name": "x"}})
        if answer != "drop":
            code, headers, body = answer
            raw = json.dumps(body).encode()
            extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
            writer.write(f"HTTP/1.1 {code} X\r\nContent-Type: application/json\r\nContent-Length: {len(raw)}\r\n"
                         f"Connection: close\r\n{extra}\r\n".encode() + raw)
            await writer.drain()
        writer.close()


@pytest_asyncio.fixture
async def flaky() -> AsyncIterator[Flaky]:
    server = Flaky()
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    server.url = f"http://127.0.0.1:{listener.sockets[0].getsockname()[1]}"
    try:
        yield server
    finally:
        listener.close()
        await listener.wait_closed()


def _status(code: int, reason: str, retry_after: str | None = None) -> tuple[int, dict[str, str], dict]:
    headers = {"Retry-After": retry_after} if retry_after else {}
    return code, headers, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code,
                           "reason": reason, "message": reason}


async def test_429_with_retry_after_is_retried_for_a_write(flaky: Flaky) -> None:
    flaky.answers += [_status(429, "TooManyRequests", "0"), _status(429, "TooManyRequests", "0")]
    async with RestClient(Config.for_url(flaky.url), retry=FAST) as client:
        created = await client.create(CONFIGMAPS, {"metadata": {"name": "x"}}, "default")
    assert created["metadata"]["name"] == "x" and flaky.calls == ["POST", "POST", "POST"]


async def test_a_lost_connection_is_retried_for_a_read_but_not_for_a_write(flaky: Flaky) -> None:
    flaky.answers += ["drop", "drop"]
    async with RestClient(Config.for_url(flaky.url), retry=FAST) as client:
        assert (await client.get(CONFIGMAPS, "x", "default"))["metadata"]["name"] == "x"
        assert flaky.calls == ["GET", "GET", "GET"]
        flaky.answers.append("drop")
        with pytest.raises(aiohttp.ClientError):
            await client.create(CONFIGMAPS, {"metadata": {"name": "x"}}, "default")
        assert flaky.calls[3:] == ["POST"]


async def test_an_error_that_stays_is_raised_with_its_status(flaky: Flaky) -> None:
    flaky.answers += [_status(503, "ServiceUnavailable")] * 10
    async with RestClient(Config.for_url(flaky.url), retry=FAST) as client:
        with pytest.raises(errors.APIError) as info:
            await client.get(CONFIGMAPS, "x", "default")
    assert info.value.code == 503 and info.value.reason == "ServiceUnavailable" and len(flaky.calls) == 4
