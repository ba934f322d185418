"""ClaimTracker: the allocated state it keeps in place follows the informer's changes, in-flight
allocations and our own writes, and a newer informer copy replaces an assumed one."""

from __future__ import annotations

import copy
from typing import Any

from client import cache
from scheduler.plugins.dynamic_resources.claim_tracker import ClaimTracker
from tests.scheduler.dynamic_resources.objects import claim

Obj = dict[str, Any]


def allocated(name: str, device: str, rv: str = "5") -> Obj:
    c = claim(name)
    c["metadata"]["resourceVersion"] = rv
    c["status"] = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "n1", "device": device}]}}}
    return c


def held(tracker: ClaimTracker) -> set[str]:
    return {device for _, _, device in tracker.allocated_state().devices}


def test_the_allocated_state_follows_updates_deletes_and_in_flight_claims() -> None:
    store = cache.Store()
    store.replace([allocated("a", "gpu-0"), claim("b")])
    tracker = ClaimTracker(store)
    assert held(tracker) == {"gpu-0"}

    store.update(allocated("b", "gpu-1", rv="6"))
    assert held(tracker) == {"gpu-0", "gpu-1"}
    store.update(allocated("a", "gpu-2", rv="7"))  # reallocated elsewhere
    assert held(tracker) == {"gpu-1", "gpu-2"}
    store.delete(claim("b"))
    assert held(tracker) == {"gpu-2"}

    pending = allocated("c", "gpu-3")
    tracker.signal_pending(pending["metadata"]["uid"], pending)  # not in the store at all yet
    assert held(tracker) == {"gpu-2", "gpu-3"}
    tracker.remove_pending(pending["metadata"]["uid"])
    assert held(tracker) == {"gpu-2"}


def test_an_assumed_write_stands_until_the_informer_delivers_it_or_something_newer() -> None:
    store = cache.Store()
    store.replace([claim("a")])
    tracker = ClaimTracker(store)
    written = allocated("a", "gpu-0", rv="9")
    tracker.assume(written)
    assert tracker.get("default", "a") == written
    assert held(tracker) == {"gpu-0"}

    newer = copy.deepcopy(written)
    newer["metadata"]["resourceVersion"] = "10"
    newer["status"]["reservedFor"] = [{"resource": "pods", "name": "p", "uid": "u"}]
    store.update(newer)
    assert tracker.get("default", "a") is newer
    assert tracker.list() == [newer]


def test_dropping_the_in_flight_extended_claim_keeps_the_devices_the_created_claim_holds() -> None:
    """Issue 11: the special claim is in flight under its template's uid while PreBind creates the
    real claim (another uid) with the same allocation. A cycle that counts both, then the in-flight
    copy going away, must leave the devices taken: else the next pod gets them a second time."""
    store = cache.Store()
    tracker = ClaimTracker(store)
    template = allocated("<extended-resources>", "gpu-0")
    template["metadata"]["uid"] = "template-uid"
    tracker.signal_pending("template-uid", template)
    assert held(tracker) == {"gpu-0"}

    created = allocated("pod-extended-resources-x7k2p", "gpu-0", rv="8")
    store.add(created)  # the informer delivers the written claim while the write is in progress
    assert held(tracker) == {"gpu-0"}
    tracker.remove_pending("template-uid")
    assert held(tracker) == {"gpu-0"}
    store.delete(created)
    assert held(tracker) == set()


def _full_count(store: cache.Store, incremental: ClaimTracker) -> tuple[set[Any], dict[Any, Any], dict[Any, int]]:
    """What a tracker that counts everything anew says, given the same in-flight and assumed claims."""
    fresh = ClaimTracker(store)
    fresh._in_flight = dict(incremental._in_flight)
    fresh._assumed = dict(incremental._assumed)
    state = fresh.allocated_state()
    return set(state.devices), dict(state.capacity), dict(state.shares)


def test_the_incremental_count_matches_a_full_count_through_random_changes() -> None:
    import random

    rng = random.Random(7)
    store = cache.Store()
    tracker = ClaimTracker(store)
    rv = 10
    # Devices are per claim (two claims never hold one device exclusively, as in a real cluster).
    names = [f"c{i}" for i in range(8)]
    for step in range(600):
        rv += 1
        op = rng.randrange(9)
        name = rng.choice(names)
        if op in (0, 1, 2):
            store.update(allocated(name, f"{name}-gpu-{rng.randrange(3)}", rv=str(rv)))
        elif op == 3:
            store.update(claim(name))  # deallocated
        elif op == 4:
            store.delete(claim(name))
        elif op == 5:
            recreated = allocated(name, f"{name}-{step}-gpu", rv=str(rv))
            recreated["metadata"]["uid"] = f"uid-{name}-{step}"  # deleted and made again
            store.update(recreated)
        elif op == 6:
            pending = allocated(name, f"{name}-gpu-{rng.randrange(3)}", rv=str(rv))
            tracker.signal_pending(pending["metadata"]["uid"], pending)
        elif op == 7:
            tracker.remove_pending(f"uid-claim-{name}")
        elif rng.random() < 0.5:
            tracker.assume(allocated(name, f"{name}-gpu-{rng.randrange(3)}", rv=str(rv + 1000)))
        else:
            store.replace([allocated(n, f"{n}-gpu-{rng.randrange(3)}", rv=str(rv)) for n in rng.sample(names, 4)])
        state = tracker.allocated_state()
        assert (set(state.devices), dict(state.capacity), dict(state.shares)) == _full_count(store, tracker), step


def test_an_assumed_claim_the_informer_updates_and_deletes_unseen_is_forgotten() -> None:
    """Issue 11: PreBind's write is assumed; the informer delivers it, the claim controller
    deallocates and deletes it, all before the next cycle looks. Its devices must be free then,
    not held for the 30 s an undelivered write is kept."""
    store = cache.Store()
    store.replace([claim("a")])
    tracker = ClaimTracker(store)
    assert held(tracker) == set()
    written = allocated("a", "gpu-0", rv="9")
    tracker.assume(written)
    store.update(copy.deepcopy(written))
    store.update(claim("a"))  # deallocated (rv 5 here; any order the informer delivers)
    store.delete(claim("a"))
    assert tracker.get("default", "a") is None
    assert held(tracker) == set()

    late = allocated("b", "gpu-1", rv="12")  # the informer has not delivered this write yet
    tracker.assume(late)
    store.update(claim("other"))
    assert held(tracker) == {"gpu-1"}
