"""nodes/userns.py: blocks of 65536 host IDs from 65536 up, never shared, released, restored."""

from __future__ import annotations

import pytest

from nodes import userns


def test_pods_get_consecutive_non_overlapping_blocks_from_65536() -> None:
    alloc = userns.Allocator(blocks=4)
    bases = [alloc.allocate(uid) for uid in ("a", "b", "c")]
    assert bases == [65536, 131072, 196608]
    assert all(base % 65536 == 0 for base in bases)
    ranges = sorted((b, b + 65536) for b in bases)
    assert all(end <= start for (_, end), (start, _) in zip(ranges, ranges[1:]))


def test_asking_again_for_the_same_pod_gives_the_same_block() -> None:
    alloc = userns.Allocator(blocks=2)
    assert alloc.allocate("a") == alloc.allocate("a") == 65536
    assert alloc.allocate("b") == 131072


def test_a_released_block_is_handed_out_again_lowest_first() -> None:
    alloc = userns.Allocator(blocks=3)
    for uid in ("a", "b", "c"):
        alloc.allocate(uid)
    alloc.release("b")
    assert alloc.base_of("b") is None
    assert alloc.allocate("d") == 131072


def test_running_out_raises_the_kubelets_error() -> None:
    alloc = userns.Allocator(blocks=1)
    alloc.allocate("a")
    with pytest.raises(userns.Exhausted, match="^could not find an empty slot to allocate a user namespace$"):
        alloc.allocate("b")


def test_restore_takes_back_recorded_blocks_and_refuses_clashes() -> None:
    alloc = userns.Allocator(blocks=3)
    alloc.restore("b", 131072, 65536)
    assert alloc.allocate("a") == 65536
    assert alloc.allocate("c") == 196608
    with pytest.raises(ValueError, match="already taken"):
        alloc.restore("x", 65536, 65536)
    with pytest.raises(ValueError, match="out of range"):
        alloc.restore("y", 65536 * 9, 65536)
    with pytest.raises(ValueError, match="wrong user namespace offset"):
        alloc.restore("z", 70000, 65536)
    with pytest.raises(ValueError, match="different user namespace range"):
        alloc.restore("b", 65536, 65536)


def test_ids_per_pod_must_be_a_multiple_of_65536() -> None:
    with pytest.raises(ValueError, match="not a multiple of 65536"):
        userns.Allocator(blocks=1, ids_per_pod=1000)
    wide = userns.Allocator(blocks=2, ids_per_pod=131072)
    assert [wide.allocate("a"), wide.allocate("b")] == [131072, 262144]


def test_the_table_and_the_mapping_are_plain_data() -> None:
    alloc = userns.Allocator(blocks=2)
    alloc.allocate("b")
    alloc.allocate("a")
    assert alloc.table() == [{"podUID": "b", "hostID": 65536, "length": 65536},
                             {"podUID": "a", "hostID": 131072, "length": 65536}]
    assert userns.mapping(65536) == {"uidMappings": [{"containerId": 0, "hostId": 65536, "length": 65536}],
                                     "gidMappings": [{"containerId": 0, "hostId": 65536, "length": 65536}]}
    assert userns.mapping(None)["uidMappings"] == [{"containerId": 0, "hostId": 0, "length": 4294967295}]
