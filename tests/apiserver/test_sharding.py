"""`apiserver.sharding`: FNV-1a 64 against published vectors, the selector grammar with upstream's
messages, range matching at the edges, random splits that cover every hash exactly once, the
per-store hash memo, and the gate.
"""

from __future__ import annotations

import random
import uuid

import msgspec
import pytest

from apiserver import sharding
from apiserver.features import FeatureGates

ZERO = "0x0000000000000000"
HALF = "0x8000000000000000"
TOP = "0x10000000000000000"


def rng(field: str, start: str, end: str) -> str:
    return f"shardRange({field}, '{start}', '{end}')"


UID = "object.metadata.uid"


# -- FNV-1a 64 ----------------------------------------------------------------------------------

# Published FNV-1a 64 test vectors (Fowler/Noll/Vo's reference list, as used by Go's hash/fnv tests).
@pytest.mark.parametrize("data, expected", [
    (b"", 0xCBF29CE484222325),
    (b"a", 0xAF63DC4C8601EC8C),
    (b"ab", 0x089C4407B545986A),
    (b"abc", 0xE71FA2190541574B),
    (b"foobar", 0x85944171F73967E8),
    (b"hello", 0xA430D84680AABD0B),
    (b"abcdefghijklmnopqrstuvwxyz", 0x8450DEB1CDC382A2),
])
def test_fnv1a64_matches_the_published_vectors(data: bytes, expected: int) -> None:
    assert sharding.fnv1a64(data) == expected
    assert sharding.fnv1a64_python(data) == expected


def test_hex_hash_is_0x_and_sixteen_lowercase_digits_even_for_small_values() -> None:
    assert sharding.hex_hash("ab") == "0x089c4407b545986a"
    assert sharding.hex_hash("") == "0xcbf29ce484222325"


# -- grammar -------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, canonical", [
    (rng(UID, ZERO, HALF), rng(UID, ZERO, HALF)),
    (f"  shardRange( {UID} ,'{ZERO}',\n'{HALF}' )  ", rng(UID, ZERO, HALF)),
    (f'shardRange({UID}, "{HALF}", "{TOP}")', rng(UID, HALF, TOP)),
    (f"({rng(UID, ZERO, HALF)}) || {rng(UID, HALF, TOP)}", f"{rng(UID, ZERO, HALF)} || {rng(UID, HALF, TOP)}"),
    (rng("object.metadata.namespace", ZERO, TOP), rng("object.metadata.namespace", ZERO, TOP)),
    (f"{rng(UID, HALF, TOP)} || {rng(UID, ZERO, HALF)} || {rng(UID, ZERO, '0x0000000000000001')}",
     f"{rng(UID, HALF, TOP)} || {rng(UID, ZERO, HALF)} || {rng(UID, ZERO, '0x0000000000000001')}"),
])
def test_a_valid_selector_prints_canonically_and_round_trips(text: str, canonical: str) -> None:
    selector = sharding.parse(text)
    assert str(selector) == canonical
    assert sharding.parse(str(selector)) == selector


@pytest.mark.parametrize("text, message", [
    ("", "empty shard selector is not allowed; omit the parameter for unfiltered lists"),
    ("   ", "empty shard selector is not allowed; omit the parameter for unfiltered lists"),
    (rng(UID, "0x0", HALF),
     'hexStart must be a 0x-prefixed 16-digit hex value, got "0x0" (did you mean "0x0000000000000000"?)'),
    (rng(UID, ZERO, "0x80"),
     'hexEnd must be a 0x-prefixed 16-digit hex value, got "0x80" (did you mean "0x0000000000000080"?)'),
    (rng(UID, "0X0000000000000000", HALF), "hexStart must have '0x' prefix, got \"0X0000000000000000\""),
    (rng(UID, "0x", HALF), "hexStart: hex value is required after '0x'"),
    (rng(UID, "0x00000000000000AB", HALF), 'hexStart: invalid hex character "A" in "0x00000000000000AB"'),
    (rng(UID, ZERO, "0x100000000000000000"), 'hexEnd: hex value too long (18 chars, max 17): "100000000000000000"'),
    (rng(UID, ZERO, "0x20000000000000000"),
     "hexEnd: 17-digit hex value must be '0x10000000000000000' (2^64), got \"0x20000000000000000\""),
    (rng(UID, HALF, ZERO), f"shard range start {HALF} must be less than end {ZERO}"),
    (rng(UID, HALF, HALF), f"shard range start {HALF} must be less than end {HALF}"),
    (rng(UID, TOP, TOP), f"shard range start {TOP} must be less than end {TOP}"),
    (rng("object.metadata.name", ZERO, HALF),
     'unsupported field path "object.metadata.name"; supported: object.metadata.uid, object.metadata.namespace'),
    (rng("metadata.uid", ZERO, HALF),
     'unsupported field path "metadata.uid"; supported: object.metadata.uid, object.metadata.namespace'),
    (f"shardRange({UID}, '{ZERO}')", "shardRange() requires exactly 3 arguments, got 2"),
    (f"shardRange({UID}, 0, '{HALF}')", "hexStart must be a string literal, got int64"),
    (f"shardRange({UID}, '{ZERO}', 1u)", "hexEnd must be a string literal, got uint64"),
    (f"shardRange({UID}, b'{ZERO}', '{HALF}')", "hexStart must be a string literal, got []uint8"),
    (f"shardRange({UID}, start, '{HALF}')", "hexStart must be a string literal (e.g. '0xff'), got expression kind 2"),
    (f"shardRange('uid', '{ZERO}', '{HALF}')",
     "shardRange() first argument: expected field path (e.g. object.metadata.uid), got expression kind 1"),
    (f"{rng(UID, ZERO, HALF)} && {rng(UID, HALF, TOP)}",
     'unsupported function "_&&_"; only shardRange() and || are allowed'),
    (f"!{rng(UID, ZERO, HALF)}", 'unsupported function "!_"; only shardRange() and || are allowed'),
    (f"has({UID})", 'unsupported function "has"; only shardRange() and || are allowed'),
    (UID, "unexpected expression kind 3; expected shardRange() call or || operator"),
    (f"[{rng(UID, ZERO, HALF)}]", "unexpected expression kind 5; expected shardRange() call or || operator"),
    (f"{rng(UID, ZERO, HALF)} || {rng('object.metadata.namespace', HALF, TOP)}",
     'all shard ranges must use the same field, got "object.metadata.uid" and "object.metadata.namespace"'),
    (f"shardRange({UID}, '{ZERO}', '{HALF}'", "CEL parse error: Syntax error: mismatched input '<EOF>' expecting {')', ','}"),
    ("shardRange(#)", "CEL parse error: Syntax error: token recognition error at: '#'"),
])
def test_a_malformed_selector_is_a_400_with_upstreams_words(text: str, message: str) -> None:
    with pytest.raises(sharding.SelectorError) as raised:
        sharding.parse(text)
    assert raised.value.detail == message
    status = raised.value.status()
    assert (status["code"], status["reason"]) == (400, "BadRequest")
    assert status["message"] == f"invalid shard selector: {message}"


def test_deep_nesting_is_refused_cleanly_not_a_crash() -> None:
    with pytest.raises(sharding.SelectorError, match="recursion limit"):
        sharding.parse("(" * 500 + rng(UID, ZERO, HALF) + ")" * 500)


def test_thousands_of_ranges_parse_without_recursion() -> None:
    text = " || ".join([rng(UID, ZERO, HALF)] * 3000)
    assert len(sharding.parse(text).ranges) == 3000


# -- matching ------------------------------------------------------------------------------------

def pod(uid: str, namespace: str = "default") -> dict[str, object]:
    return {"metadata": {"name": "p", "namespace": namespace, "uid": uid}}


def test_start_is_inclusive_and_end_exclusive() -> None:
    uid = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
    h = sharding.hex_hash(uid)
    after = f"0x{int(h, 16) + 1:016x}"
    assert sharding.parse(rng(UID, h, after)).matches(pod(uid))
    assert not sharding.parse(rng(UID, ZERO, h)).matches(pod(uid))
    assert sharding.parse(rng(UID, ZERO, after)).matches(pod(uid))


def test_the_top_bound_takes_the_largest_hash() -> None:
    selector = sharding.parse(rng(UID, "0xffffffffffffffff", TOP))
    assert selector.matches_hash(0xFFFFFFFFFFFFFFFF)
    assert not selector.matches_hash(0xFFFFFFFFFFFFFFFE)


def test_namespace_sharding_hashes_the_namespace_and_missing_fields_hash_as_empty() -> None:
    h = int(sharding.hex_hash("team-a"), 16)
    selector = sharding.parse(rng("object.metadata.namespace", f"0x{h:016x}", f"0x{h + 1:016x}"))
    assert selector.matches(pod("u1", "team-a")) and not selector.matches(pod("u1", "team-b"))
    empty = sharding.fnv1a64(b"")
    assert sharding.parse(rng(UID, f"0x{empty:016x}", f"0x{empty + 1:016x}")).matches({"metadata": {}})


def random_split(rand: random.Random, parts: int) -> list[str]:
    """`parts` selectors whose ranges tile [0, 2^64); some shards get two disjoint ranges."""
    cuts: set[int] = set()
    while len(cuts) < 2 * parts - 1:
        cuts.add(rand.randrange(1, 1 << 64))
    bounds = [0, *sorted(cuts), 1 << 64]
    pieces = [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]
    rand.shuffle(pieces)

    def text(value: int) -> str:
        return TOP if value == 1 << 64 else f"0x{value:016x}"
    return [" || ".join(rng(UID, text(a), text(b)) for a, b in pieces[2 * i: 2 * i + 2]) for i in range(parts)]


@pytest.mark.parametrize("parts", [2, 4, 16])
def test_random_splits_put_every_object_in_exactly_one_shard(parts: int) -> None:
    rand = random.Random(parts)
    selectors = [sharding.parse(text) for text in random_split(rand, parts)]
    objects = [pod(str(uuid.UUID(int=rand.getrandbits(128)))) for _ in range(2000)]
    counts = [0] * parts
    for obj in objects:
        owners = [i for i, selector in enumerate(selectors) if selector.matches(obj)]
        assert len(owners) == 1
        counts[owners[0]] += 1
    assert sum(counts) == len(objects)


# -- the per-store memo and the gate -------------------------------------------------------------

def test_a_stored_value_is_hashed_once_per_key_and_revision() -> None:
    hashes = sharding.FieldHashes()
    value = msgspec.json.encode(pod("u-1"))
    expected = sharding.fnv1a64(b"u-1")
    assert hashes.of(sharding.UID, "/k", 5, value) == expected
    assert hashes.of(sharding.UID, "/k", 5, b"not even read this time") == expected
    assert hashes.computed == 1
    renamed = msgspec.json.encode(pod("u-2"))
    assert hashes.of(sharding.UID, "/k", 6, renamed) == sharding.fnv1a64(b"u-2")
    assert hashes.computed == 2


def test_the_memo_reads_values_whose_metadata_has_unexpected_types() -> None:
    hashes = sharding.FieldHashes()
    odd = msgspec.json.encode({"metadata": {"uid": 7, "namespace": "ns"}})
    assert hashes.of(sharding.UID, "/odd", 1, odd) == sharding.fnv1a64(b"")
    assert hashes.of(sharding.NAMESPACE, "/odd", 1, odd) == sharding.fnv1a64(b"ns")


def test_the_memo_is_dropped_when_it_outgrows_its_limit() -> None:
    hashes = sharding.FieldHashes(limit=2)
    for i in range(5):
        hashes.of(sharding.UID, f"/k{i}", 1, msgspec.json.encode(pod(f"u{i}")))
    assert hashes.of(sharding.UID, "/k4", 1, b"{}") == sharding.fnv1a64(b"u4")  # the newest entry survives
    assert hashes.computed == 5


class _Server:
    def __init__(self, gates: str) -> None:
        self.gates = FeatureGates.parse(gates)
        self.store: object = type("FakeStore", (), {})()  # only its identity matters


@pytest.mark.parametrize("gates, query, sharded", [
    ("", {"shardSelector": rng(UID, ZERO, HALF)}, True),
    ("", {}, False),
    ("", {"shardSelector": ""}, False),
    ("ShardedListAndWatch=false", {"shardSelector": rng(UID, ZERO, HALF)}, False),
    ("ShardedListAndWatch=false", {"shardSelector": "not even parsed"}, False),
])
def test_from_query_honours_the_gate_and_an_absent_parameter(gates: str, query: dict[str, str], sharded: bool) -> None:
    shard = sharding.from_query(_Server(gates), query)
    assert (shard is not None) == sharded
    if shard is not None:
        assert str(shard) == rng(UID, ZERO, HALF)


def test_each_store_has_its_own_memo() -> None:
    one, two = _Server(""), _Server("")
    assert sharding.hashes_for(one.store) is sharding.hashes_for(one.store)
    assert sharding.hashes_for(one.store) is not sharding.hashes_for(two.store)
