"""The inventory: pools by driver and name, newest generation, completeness, the node index, and
the CEL results that live on a slice's devices until the slice changes."""

from __future__ import annotations

from scheduler.dra import allocator, inventory
from tests.scheduler.dra.builders import GPU_CLASS, DRIVER, claim, device, exact, node, slice_


def pools(inv: inventory.Inventory, node_name: str = "n1") -> list[tuple[str, int, bool, list[str]]]:
    return [(p.id_text, p.generation, p.complete, [s.name for s in p.slices]) for p in inv.pools_for(node_name)]


def test_a_pool_is_complete_once_it_has_resource_slice_count_slices_of_its_newest_generation() -> None:
    inv = inventory.Inventory()
    inv.upsert(slice_("a", [device("x")], node="n1", pool="n1", count=2))
    assert pools(inv) == [(f"{DRIVER}/n1", 1, False, ["a"])]
    inv.upsert(slice_("b", [device("y")], node="n1", pool="n1", count=2))
    assert pools(inv) == [(f"{DRIVER}/n1", 1, True, ["a", "b"])]


def test_a_newer_generation_replaces_the_old_slices_and_removing_it_brings_them_back() -> None:
    inv = inventory.Inventory()
    inv.upsert(slice_("old", [device("x")], node="n1", pool="n1"))
    newer = slice_("new", [device("y")], node="n1", pool="n1", generation=2, count=2)
    inv.upsert(newer)
    assert pools(inv) == [(f"{DRIVER}/n1", 2, False, ["new"])]
    inv.remove(newer)
    assert pools(inv) == [(f"{DRIVER}/n1", 1, True, ["old"])]


def test_pools_are_indexed_by_node_and_shared_slices_are_seen_from_every_node() -> None:
    inv = inventory.Inventory()
    inv.upsert(slice_("n1-gpu", [device("x")], node="n1"))
    inv.upsert(slice_("n2-gpu", [device("x")], node="n2"))
    inv.upsert(slice_("fabric", [device("nic")], pool="fabric", allNodes=True, driver="net.example.com"))
    assert [p.id_text for p in inv.pools_for("n1")] == [f"{DRIVER}/n1", "net.example.com/fabric"]
    assert [p.id_text for p in inv.pools_for("n3")] == ["net.example.com/fabric"]
    assert [p.id_text for p in inv.pools_of_driver(DRIVER)] == [f"{DRIVER}/n1", f"{DRIVER}/n2"]
    inv.remove(slice_("n1-gpu", node="n1"))
    assert [p.id_text for p in inv.pools_for("n1")] == ["net.example.com/fabric"]
    assert len(inv) == 2


def test_selector_results_stay_with_an_unchanged_slice_and_go_with_a_changed_one() -> None:
    inv = inventory.Inventory()
    inv.upsert(slice_("s", [device("gpu-0", attrs={"model": "A100"})], node="n1", rv="1"))
    wants_h100 = claim("c", exact("g", "gpu", f'device.attributes["{DRIVER}"].model == "H100"'))

    def allocate() -> allocator.Outcome:
        a = allocator.Allocator(inventory=inv, classes={"gpu": GPU_CLASS}, allocated=allocator.AllocatedState())
        return a.allocate(node("n1"), [wants_h100])

    assert allocate().allocations is None
    (dev,) = inv.pool((DRIVER, "n1")).slices[0].devices
    by_expression = {k: v for k, v in dev.matches.items() if isinstance(k, str)}
    assert by_expression == {f'device.driver == "{DRIVER}"': True, f'device.attributes["{DRIVER}"].model == "H100"': False}
    inv.upsert(slice_("s", [device("gpu-0", attrs={"model": "A100"})], node="n1", rv="1"))  # a resync
    assert inv.pool((DRIVER, "n1")).slices[0].devices[0] is dev
    inv.upsert(slice_("s", [device("gpu-0", attrs={"model": "H100"})], node="n1", rv="2"))
    assert inv.pool((DRIVER, "n1")).slices[0].devices[0].matches == {}
    assert allocate().allocations is not None
