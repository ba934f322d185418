"""The manager's contract with a controller, on the fake source: events become keys, a key is
never reconciled twice at once, `Result.requeue_after` comes back, `Terminal` is not retried and
other failures are retried with backoff."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Hashable
from typing import Any

from client.errors import APIError
from client.informer import Informer
from client.testing import CONFIGMAPS, FakeListWatch
from controllers.manager import Manager
from controllers.reconciling import Result, Terminal, Watch, by_name


class Scripted:
    """Reconciles by looking up what each key should do in `script`."""

    name = "scripted"

    def __init__(self, script: dict[str, str]) -> None:
        self.script = script
        self.calls: Counter[Hashable] = Counter()
        self.running: set[Hashable] = set()
        self.overlaps = 0
        self.seen: list[str] = []  # data.n of the object when reconciled, when a store is given
        self.store: Any = None
        self.watches = [Watch(CONFIGMAPS, by_name)]

    async def reconcile(self, key: Hashable) -> Result | None:
        if key in self.running:
            self.overlaps += 1
        self.running.add(key)
        try:
            self.calls[key] += 1
            if self.store is not None:
                self.seen.append(self.store.get(key)["data"]["n"])
            await asyncio.sleep(0.01)
            action = self.script.get(str(key).split("/")[-1], "ok")
            if action == "terminal":
                raise Terminal("cannot be fixed by retrying")
            if action == "flaky" and self.calls[key] < 3:
                raise RuntimeError("try again")
            if action == "requeue" and self.calls[key] < 3:
                return Result(requeue_after=0.01)
            return None
        finally:
            self.running.discard(key)


async def _manager(fake: FakeListWatch, controller: Scripted) -> Manager:
    manager = Manager(None, [controller], workers=4, backoff_base=0.01,  # type: ignore[arg-type]
                      informer_factory=lambda watch: Informer(fake))
    await manager.start(sync_timeout=2)
    return manager


async def test_each_outcome_is_followed_as_documented() -> None:
    fake = FakeListWatch()
    for name in ("ok", "terminal", "flaky", "requeue"):
        fake.create({"metadata": {"name": name, "namespace": "ns"}})
    controller = Scripted({"terminal": "terminal", "flaky": "flaky", "requeue": "requeue"})
    manager = await _manager(fake, controller)
    await asyncio.sleep(0.3)
    await manager.stop()

    assert controller.calls == {"ns/ok": 1, "ns/terminal": 1, "ns/flaky": 3, "ns/requeue": 3}


async def test_a_busy_key_is_never_reconciled_twice_at_once_and_no_change_is_lost() -> None:
    fake = FakeListWatch()
    fake.create({"metadata": {"name": "hot", "namespace": "ns"}, "data": {"n": "0"}})
    controller = Scripted({})
    manager = await _manager(fake, controller)
    controller.store = next(iter(manager.informers.values())).store
    for n in range(1, 30):
        fake.update({"metadata": {"name": "hot", "namespace": "ns"}, "data": {"n": str(n)}})
        await asyncio.sleep(0.002)
    await asyncio.sleep(0.1)
    calls_after_burst = controller.calls["ns/hot"]
    await manager.stop()

    assert controller.overlaps == 0
    assert 2 <= calls_after_burst < 30, "events for a busy key are coalesced"
    assert controller.seen[-1] == "29", "the last change is still reconciled"


async def test_a_cache_that_never_fills_does_not_keep_the_others_from_starting() -> None:
    healthy, forbidden = FakeListWatch(), FakeListWatch()
    healthy.create({"metadata": {"name": "ok", "namespace": "ns"}})
    forbidden.watch_errors.extend(APIError(403, "Forbidden", "no list for you") for _ in range(100))
    controller = Scripted({})
    controller.watches.append(Watch(CONFIGMAPS, by_name, namespace="forbidden"))
    sources = {None: healthy, "forbidden": forbidden}
    manager = Manager(None, [controller], backoff_base=0.01,  # type: ignore[arg-type]
                      informer_factory=lambda watch: Informer(sources[watch.namespace]))
    await manager.start(sync_timeout=0.2)
    await asyncio.sleep(0.05)
    await manager.stop()

    assert controller.calls == {"ns/ok": 1}


async def test_each_controller_runs_as_many_workers_as_it_is_given() -> None:
    fake = FakeListWatch()
    for n in range(12):
        fake.create({"metadata": {"name": f"cm-{n}", "namespace": "ns"}})
    busiest: dict[str, int] = {}

    class Counting(Scripted):
        async def reconcile(self, key: Hashable) -> Result | None:
            busiest[self.name] = max(busiest.get(self.name, 0), len(self.running) + 1)
            return await super().reconcile(key)

    one, many = Counting({}), Counting({})
    one.name, many.name = "one", "many"
    manager = Manager(None, [one, many], workers=1, workers_for={"many": 6},  # type: ignore[arg-type]
                      informer_factory=lambda watch: Informer(fake))
    await manager.start(sync_timeout=2)
    await asyncio.sleep(0.5)
    await manager.stop()

    assert sum(one.calls.values()) == sum(many.calls.values()) == 12
    assert busiest == {"one": 1, "many": 6}
