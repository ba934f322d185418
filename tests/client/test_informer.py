"""The informer's guarantee paragraph, checked: per-object order, eventual consistency after an
expired watch, delete-then-recreate seen as an update; plus late handlers, failing handlers,
indexes and the client-side shard filter, all on the fake source."""

from __future__ import annotations

import asyncio
import random
from typing import Any

from client import cache, sharding
from client.informer import Event, Informer
from client.testing import FakeListWatch


def _cm(name: str, value: str = "1", **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns", **meta}, "data": {"v": value}}


async def _until(check: Any, timeout: float = 2.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.005)


class Recorder:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def of(self, name: str) -> list[tuple[str, str]]:
        return [(e.type, e.obj["data"]["v"]) for e in self.events if e.obj["metadata"]["name"] == name]


async def _started(fake: FakeListWatch, **options: Any) -> tuple[Informer, Recorder]:
    informer, recorder = Informer(fake, **options), Recorder()
    informer.add_handler(recorder)
    informer.start()
    await informer.wait_synced(2)
    await _until(lambda: fake.open_watches == 1)
    return informer, recorder


async def test_each_objects_events_arrive_in_the_order_the_server_made_them() -> None:
    fake = FakeListWatch()
    informer, seen = await _started(fake)
    fake.create(_cm("a", "1"))
    fake.create(_cm("b", "1"))
    for value in "234":
        fake.update(_cm("a", value))
        fake.update(_cm("b", value))
    fake.delete("a", "ns")
    await _until(lambda: len(seen.events) == 9)
    await informer.stop()

    assert seen.of("a") == [("ADDED", "1"), ("MODIFIED", "2"), ("MODIFIED", "3"), ("MODIFIED", "4"), ("DELETED", "4")]
    assert seen.of("b") == [("ADDED", "1"), ("MODIFIED", "2"), ("MODIFIED", "3"), ("MODIFIED", "4")]
    modified = [e for e in seen.events if e.type == "MODIFIED" and e.obj["metadata"]["name"] == "a"]
    assert [((e.old or {})["data"]["v"], e.obj["data"]["v"]) for e in modified] == [("1", "2"), ("2", "3"), ("3", "4")]


async def test_the_store_converges_on_the_server_state_across_expired_watches() -> None:
    fake = FakeListWatch()
    rng = random.Random(7)
    for i in range(10):
        fake.create(_cm(f"o{i}"))
    informer, _ = await _started(fake)
    for round_ in range(5):
        for _ in range(20):
            name = f"o{rng.randrange(15)}"
            if f"ns/{name}" in fake.objects and rng.random() < 0.3:
                fake.delete(name, "ns")
            elif f"ns/{name}" in fake.objects:
                fake.update(_cm(name, str(rng.random())))
            else:
                fake.create(_cm(name))
        if round_ % 2:
            fake.expire_watches()  # what follows is only seen by the relist
            if "ns/o0" in fake.objects:
                fake.update(_cm("o0", "late"))
            else:
                fake.create(_cm("o0", "late"))
            fake.compact()
        await asyncio.sleep(0.02)

    def converged() -> bool:
        return {k: o["metadata"]["resourceVersion"] for k, o in fake.objects.items()} == \
            {cache.key_of(o): o["metadata"]["resourceVersion"] for o in informer.store.list()}

    await _until(converged)
    await informer.stop()


async def test_delete_then_recreate_while_not_watching_looks_like_an_update() -> None:
    fake = FakeListWatch()
    first = fake.create(_cm("same", "old"))
    fake.create(_cm("gone"))
    informer, seen = await _started(fake)
    seen.events.clear()

    fake.expire_watches()  # the informer is not watching while these happen
    fake.delete("same", "ns")
    second = fake.create(_cm("same", "new"))
    fake.delete("gone", "ns")
    await _until(lambda: len(seen.events) == 2)
    await informer.stop()

    by_type = {e.type: e for e in seen.events}
    update = by_type["MODIFIED"]
    assert update.old is not None and update.old["metadata"]["uid"] == first["metadata"]["uid"]
    assert update.obj["metadata"]["uid"] == second["metadata"]["uid"] != first["metadata"]["uid"]
    deletion = by_type["DELETED"]
    assert deletion.final_state_unknown and deletion.obj["metadata"]["name"] == "gone"


async def test_a_handler_added_after_sync_first_sees_every_cached_object() -> None:
    fake = FakeListWatch()
    fake.create(_cm("a"))
    fake.create(_cm("b"))
    informer, _ = await _started(fake)
    late = Recorder()
    informer.add_handler(late)
    await informer.stop()

    assert sorted((e.type, e.key, e.initial) for e in late.events) == [("ADDED", "ns/a", True), ("ADDED", "ns/b", True)]


async def test_a_failing_handler_does_not_stop_the_others_or_the_informer() -> None:
    fake = FakeListWatch()
    informer, seen = await _started(fake)

    def broken(event: Event) -> None:
        raise RuntimeError("bug in a handler")

    informer.remove_handler(seen)
    informer.add_handler(broken)
    informer.add_handler(seen)
    fake.create(_cm("a"))
    fake.create(_cm("b"))
    await _until(lambda: len(seen.events) == 2)
    await informer.stop()
    assert informer.store.keys() == ["ns/a", "ns/b"]


async def test_indexes_follow_updates_and_deletes() -> None:
    fake = FakeListWatch()
    informer, seen = await _started(fake, indexers={"owner": cache.by_owner_uid})
    fake.create(_cm("a", ownerReferences=[{"uid": "u1"}]))
    fake.create(_cm("b", ownerReferences=[{"uid": "u1"}, {"uid": "u2"}]))
    await _until(lambda: len(seen.events) == 2)
    assert [o["metadata"]["name"] for o in informer.store.by_index("owner", "u1")] == ["a", "b"]
    fake.update(_cm("a", ownerReferences=[{"uid": "u2"}]))
    fake.delete("b", "ns")
    await _until(lambda: len(seen.events) == 4)
    await informer.stop()

    assert informer.store.by_index("owner", "u1") == []
    assert [o["metadata"]["name"] for o in informer.store.by_index("owner", "u2")] == ["a"]


async def test_a_shard_selector_keeps_only_its_shard_even_when_the_server_ignores_it() -> None:
    selector = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
    fake = FakeListWatch(shard_selector=selector)  # the fake, like an old server, sends everything
    for i in range(40):
        fake.create(_cm(f"o{i}"))
    informer, _ = await _started(fake)
    for i in range(40, 60):
        fake.create(_cm(f"o{i}"))
    await asyncio.sleep(0.05)
    await informer.stop()

    shard = sharding.parse(selector)
    expected = sorted(k for k, o in fake.objects.items() if shard.matches(o))
    assert sorted(informer.store.keys()) == expected
    assert 10 < len(expected) < 50  # both halves are populated: the filter really split them
