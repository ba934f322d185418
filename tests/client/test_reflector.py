"""The reflector: the after-a-watch rule on its own, then list/watch scenarios on the fake source
(WatchList, fallback to list + watch on a 4xx, 410 → relist, clean end → re-watch, pagination)."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncGenerator

import aiohttp
import pytest

from client.errors import APIError
from client.reflector import Reflector, Step, next_step
from client.testing import FakeListWatch

NEXT_STEP_CASES = [
    ("a watch that ended cleanly is resumed from the last resourceVersion", None, Step.REWATCH),
    ("a 410 Gone means the position is lost: relist", APIError(410, "Gone", "gone"), Step.RELIST),
    ("an Expired reason means relist whatever the code", APIError(500, "Expired", "too old resource version"), Step.RELIST),
    ("a resourceVersion the server has not reached yet means relist",
     APIError(504, "Timeout", "Too large resource version", {"details": {"causes": [{"reason": "ResourceVersionTooLarge"}]}}),
     Step.RELIST),
    ("a plain 504 is transient: wait and resume", APIError(504, "Timeout", "slow"), Step.BACKOFF_REWATCH),
    ("429 is transient: wait and resume", APIError(429, "TooManyRequests", "later"), Step.BACKOFF_REWATCH),
    ("a 500 is transient: wait and resume", APIError(500, "InternalError", "oops"), Step.BACKOFF_REWATCH),
    ("a refused connection is transient: wait and resume", aiohttp.ClientConnectionError("refused"), Step.BACKOFF_REWATCH),
    ("a timeout is transient: wait and resume", asyncio.TimeoutError(), Step.BACKOFF_REWATCH),
    ("a 403 is not transient: wait and relist", APIError(403, "Forbidden", "no"), Step.BACKOFF_RELIST),
    ("a garbled stream: wait and relist", ValueError("unexpected watch event type"), Step.BACKOFF_RELIST),
]


@pytest.mark.parametrize("case, error, step", NEXT_STEP_CASES, ids=[c[0] for c in NEXT_STEP_CASES])
def test_next_step(case: str, error: BaseException | None, step: Step) -> None:
    assert next_step(error) is step


class RecordingSink:
    def __init__(self) -> None:
        self.state: dict[str, dict[str, Any]] = {}
        self.replaces: list[tuple[list[str], str]] = []
        self.events: list[tuple[str, str]] = []

    def replace(self, objects: list[dict[str, Any]], resource_version: str) -> None:
        self.state = {o["metadata"]["name"]: o for o in objects}
        self.replaces.append((sorted(self.state), resource_version))

    def apply(self, event_type: str, obj: dict[str, Any]) -> None:
        name = obj["metadata"]["name"]
        self.events.append((event_type, name))
        if event_type == "DELETED":
            self.state.pop(name, None)
        else:
            self.state[name] = obj


def _cm(name: str, value: str = "1") -> dict[str, Any]:
    return {"metadata": {"name": name}, "data": {"v": value}}


async def _until(check: Any, timeout: float = 2.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.005)


async def _running(reflector: Reflector) -> asyncio.Task[None]:
    return asyncio.create_task(reflector.run())


async def _stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_watch_list_fills_the_sink_from_initial_events_then_streams_changes() -> None:
    fake, sink = FakeListWatch(), RecordingSink()
    fake.create(_cm("a"))
    fake.create(_cm("b"))
    task = await _running(Reflector(fake, sink))
    await _until(lambda: sink.replaces)
    fake.update(_cm("a", "2"))
    fake.delete("b")
    await _until(lambda: len(sink.events) == 2)
    await _stop(task)

    assert sink.replaces == [(["a", "b"], "2")]
    assert sink.events == [("MODIFIED", "a"), ("DELETED", "b")]
    assert [c for c, _ in fake.calls] == ["watch"]
    assert fake.calls[0][1] == {"resource_version": "", "send_initial_events": True}


async def test_a_server_without_watch_list_gets_list_then_watch_from_the_list_revision() -> None:
    fake, sink = FakeListWatch(watch_list=False), RecordingSink()
    fake.create(_cm("a"))
    reflector = Reflector(fake, sink)
    task = await _running(reflector)
    await _until(lambda: fake.open_watches == 1)
    fake.create(_cm("b"))
    await _until(lambda: sink.events)
    await _stop(task)

    assert [(c, a.get("send_initial_events")) for c, a in fake.calls] == [("watch", True), ("list", None), ("watch", False)]
    assert fake.calls[2][1]["resource_version"] == "1"
    assert sink.replaces == [(["a"], "1")] and sink.events == [("ADDED", "b")]
    assert reflector.use_watch_list is False


async def test_an_expired_watch_means_a_relist_from_scratch() -> None:
    fake, sink = FakeListWatch(watch_list=False), RecordingSink()
    fake.create(_cm("a"))
    task = await _running(Reflector(fake, sink))
    await _until(lambda: fake.open_watches == 1)
    # The server loses our position: the stream gets a 410, and what happens meanwhile is only
    # visible to a new list.
    fake.expire_watches()
    fake.delete("a")
    fake.create(_cm("c"))
    fake.compact()
    await _until(lambda: len(sink.replaces) == 2)
    await _stop(task)

    assert sink.replaces == [(["a"], "1"), (["c"], "3")]
    lists = [a for c, a in fake.calls if c == "list"]
    assert [a["resource_version"] for a in lists] == ["", ""]
    assert sink.events == []


async def test_an_expired_answer_to_a_rewatch_relists_without_backing_off() -> None:
    fake, sink = FakeListWatch(), RecordingSink()
    fake.create(_cm("a"))
    reflector = Reflector(fake, sink, backoff_initial=30.0)  # a backoff would time the test out
    task = await _running(reflector)
    await _until(lambda: fake.open_watches == 1)
    fake.watch_errors.append(APIError(410, "Expired", "too old resource version: 1 (5)"))
    fake.end_watches()  # the server's timeout: the reflector re-watches from "1" and hears 410
    await _until(lambda: len(sink.replaces) == 2)
    await _stop(task)

    watches = [a for c, a in fake.calls if c == "watch"]
    assert watches == [{"resource_version": "", "send_initial_events": True},
                       {"resource_version": "1", "send_initial_events": False},
                       {"resource_version": "", "send_initial_events": True}]


async def test_a_cleanly_ended_watch_resumes_from_the_last_event_without_relisting() -> None:
    fake, sink = FakeListWatch(), RecordingSink()
    fake.create(_cm("a"))
    task = await _running(Reflector(fake, sink))
    await _until(lambda: fake.open_watches == 1)
    fake.update(_cm("a", "2"))
    await _until(lambda: sink.events)
    fake.end_watches()
    await _until(lambda: len(fake.calls) == 2 and fake.open_watches == 1)
    fake.update(_cm("a", "3"))
    await _until(lambda: len(sink.events) == 2)
    await _stop(task)

    assert fake.calls[1] == ("watch", {"resource_version": "2", "send_initial_events": False})
    assert len(sink.replaces) == 1
    assert sink.state["a"]["data"]["v"] == "3"


async def test_lists_follow_continue_tokens_and_replace_once_with_every_page() -> None:
    fake, sink = FakeListWatch(watch_list=False), RecordingSink()
    for name in "abcde":
        fake.create(_cm(name))
    task = await _running(Reflector(fake, sink, page_size=2))
    await _until(lambda: sink.replaces)
    await _stop(task)

    assert [a["continue"] for c, a in fake.calls if c == "list"] == ["", "5:2", "5:4"]
    assert sink.replaces == [(["a", "b", "c", "d", "e"], "5")]
    assert all(o["kind"] == "ConfigMap" and o["apiVersion"] == "v1" for o in sink.state.values())


async def test_a_watch_list_that_ends_before_its_bookmark_is_started_over() -> None:
    fake, sink = FakeListWatch(), RecordingSink()
    fake.create(_cm("a"))
    fake.watch_errors.append(APIError(500, "InternalError", "stream broke"))
    task = await _running(Reflector(fake, sink, backoff_initial=0.01))
    await _until(lambda: sink.replaces)
    await _stop(task)

    assert [a for c, a in fake.calls] == [{"resource_version": "", "send_initial_events": True}] * 2


class ClosesAtOnce(FakeListWatch):
    """A source whose plain watches end immediately, as a misbehaving proxy would make them."""

    async def watch(self, *, resource_version: str = "", send_initial_events: bool = False,
                    timeout_seconds: int | None = None) -> AsyncGenerator[dict[str, Any], None]:
        if send_initial_events:
            async for event in super().watch(resource_version=resource_version, send_initial_events=True):
                yield event
                if event["type"] == "BOOKMARK":
                    return
        self.calls.append(("watch", {"resource_version": resource_version, "send_initial_events": False}))


async def test_watches_that_end_at_once_without_events_are_retried_with_backoff_not_in_a_spin() -> None:
    fake, sink = ClosesAtOnce(), RecordingSink()
    fake.create(_cm("a"))
    task = await _running(Reflector(fake, sink, backoff_initial=0.05))
    await asyncio.sleep(0.4)
    await _stop(task)

    assert sink.replaces == [(["a"], "1")]
    assert 2 <= len(fake.calls) <= 8
