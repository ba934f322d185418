"""Node selection of slices and devices: nodeName, allNodes and core/v1 NodeSelectors."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.dra import node_selection
from tests.scheduler.dra.builders import node

N1 = node("n1", zone="a", gpus="8")


def term(*expressions: dict[str, Any], fields: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if expressions:
        out["matchExpressions"] = list(expressions)
    if fields:
        out["matchFields"] = fields
    return out


def req(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": list(values)} if values else {"key": key, "operator": operator}


CASES = [
    ("n1", False, None, True, "nodeName names the node"),
    ("n2", True, None, False, "nodeName decides before allNodes"),
    ("", True, None, True, "allNodes matches every node"),
    ("", False, None, False, "nothing set matches nothing"),
    ("", False, {"nodeSelectorTerms": [term(req("zone", "In", "a", "b"))]}, True, "In matches a listed value"),
    ("", False, {"nodeSelectorTerms": [term(req("zone", "NotIn", "a"))]}, False, "NotIn refuses a listed value"),
    ("", False, {"nodeSelectorTerms": [term(req("rack", "NotIn", "r1"))]}, True, "NotIn accepts a missing label"),
    ("", False, {"nodeSelectorTerms": [term(req("zone", "Exists"), req("rack", "DoesNotExist"))]}, True,
     "Exists and DoesNotExist look at the key"),
    ("", False, {"nodeSelectorTerms": [term(req("gpus", "Gt", "4"), req("gpus", "Lt", "9"))]}, True, "Gt and Lt compare integers"),
    ("", False, {"nodeSelectorTerms": [term(req("zone", "Gt", "4"))]}, False, "Gt on a non-integer label fails"),
    ("", False, {"nodeSelectorTerms": [term(req("zone", "In", "b")), term(req("zone", "In", "a"))]}, True,
     "terms are ORed"),
    ("", False, {"nodeSelectorTerms": [term(req("zone", "In", "a"), req("gpus", "In", "4"))]}, False,
     "requirements in a term are ANDed"),
    ("", False, {"nodeSelectorTerms": [term(fields=[req("metadata.name", "In", "n1")])]}, True,
     "matchFields match metadata.name"),
    ("", False, {"nodeSelectorTerms": [term(fields=[req("spec.unschedulable", "In", "n1")])]}, False,
     "matchFields on another field match nothing"),
    ("", False, {"nodeSelectorTerms": [{}]}, False, "an empty term matches nothing"),
]


@pytest.mark.parametrize("node_name, all_nodes, selector, want", [c[:4] for c in CASES], ids=[c[4] for c in CASES])
def test_matches(node_name: str, all_nodes: bool, selector: dict[str, Any] | None, want: bool) -> None:
    assert node_selection.matches(N1, node_name, all_nodes, selector) is want
