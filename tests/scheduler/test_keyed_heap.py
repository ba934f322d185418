"""KeyedHeap: pops in order, forgets removed and replaced keys, and stays right across rebuilds."""

from __future__ import annotations

import random

from scheduler.keyed_heap import KeyedHeap


def _drain(heap: KeyedHeap[tuple[int, int]]) -> list[tuple[int, int]]:
    out = []
    while (item := heap.pop()) is not None:
        out.append(item)
    return out


def test_pops_in_order_and_skips_what_was_discarded() -> None:
    heap: KeyedHeap[tuple[int, int]] = KeyedHeap()
    for i, value in enumerate([5, 1, 4, 2, 3]):
        heap.push(f"k{i}", (value, i))
    assert heap.discard("k1") == (1, 1) and heap.discard("k1") is None
    assert len(heap) == 4 and "k1" not in heap and "k3" in heap
    assert heap.peek() == (2, 3)
    assert _drain(heap) == [(2, 3), (3, 4), (4, 2), (5, 0)]
    assert heap.pop() is None and heap.peek() is None and len(heap) == 0


def test_pushing_a_key_again_replaces_its_entry() -> None:
    heap: KeyedHeap[tuple[int, int]] = KeyedHeap()
    heap.push("a", (1, 0))
    heap.push("b", (2, 1))
    heap.push("a", (3, 2))  # "a" moved behind "b"
    assert heap.get("a") == (3, 2) and len(heap) == 2
    assert _drain(heap) == [(2, 1), (3, 2)]


def test_many_removals_match_a_sorted_list_through_rebuilds() -> None:
    rng = random.Random(7)
    heap: KeyedHeap[tuple[int, int]] = KeyedHeap()
    expected: dict[str, tuple[int, int]] = {}
    for i in range(2000):
        key = f"k{rng.randrange(600)}"
        if key in expected and rng.random() < 0.5:
            heap.discard(key)
            del expected[key]
        else:
            heap.push(key, (rng.randrange(100), i))
            expected[key] = heap.get(key)  # type: ignore[assignment]
    assert sorted(heap) == sorted(expected.values())
    assert _drain(heap) == sorted(expected.values())
