"""Shard selectors on the client: upstream's grammar and errors, FNV-1a 64, range matching."""

from __future__ import annotations

import pytest

from client import sharding

HALF = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"


def test_fnv1a_64_matches_the_published_test_vectors() -> None:
    assert sharding.fnv1a_64("") == 0xCBF29CE484222325
    assert sharding.fnv1a_64("a") == 0xAF63DC4C8601EC8C
    assert sharding.fnv1a_64("foobar") == 0x85944171F73967E8


def test_an_object_matches_when_its_hash_is_inside_any_range() -> None:
    low = {"metadata": {"uid": "a"}}  # 0xaf63… is in the upper half
    selector = sharding.parse(HALF)
    assert not selector.matches(low)
    upper = sharding.parse("shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')")
    assert upper.matches(low)
    both = sharding.parse(HALF + " || shardRange(object.metadata.uid, '0xa000000000000000', '0xb000000000000000')")
    assert both.matches(low)


def test_namespace_ranges_hash_the_namespace() -> None:
    selector = sharding.parse("shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')")
    assert selector.matches({"metadata": {"namespace": "a", "uid": "zzz"}})


BAD = [
    ("a short bound is refused", "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')"),
    ("upper-case hex is refused", "shardRange(object.metadata.uid, '0x000000000000000A', '0x8000000000000000')"),
    ("only uid and namespace may be hashed", "shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')"),
    ("start must be below end", "shardRange(object.metadata.uid, '0x8000000000000000', '0x0000000000000000')"),
    ("all ranges use one field", HALF + " || shardRange(object.metadata.namespace, '0x8000000000000000', '0x9000000000000000')"),
    ("other operators are not allowed", HALF + " && " + HALF),
    ("the empty selector is an error", ""),
]


@pytest.mark.parametrize("case, text", BAD, ids=[b[0] for b in BAD])
def test_invalid_selectors_are_rejected(case: str, text: str) -> None:
    with pytest.raises(ValueError):
        sharding.parse(text)
