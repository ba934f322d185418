"""Namespaces: finalizer, phase, name label, no generation, status and finalize subresources."""

from __future__ import annotations

import pytest

from tests.apiserver.kinds.writes import create, created, edited, messages, strategy, update
from tests.conftest import InProcess


def namespaces():
    return strategy("", "namespaces", namespaced=False)


def a_namespace(name: str = "team-a") -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def test_a_new_namespace_is_active_with_the_kubernetes_finalizer_and_its_name_label():
    ns = created(namespaces(), a_namespace())
    assert ns["spec"] == {"finalizers": ["kubernetes"]}
    assert ns["status"] == {"phase": "Active"}
    assert ns["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team-a"}
    assert "generation" not in ns["metadata"]


def test_own_finalizers_are_kept_and_kubernetes_is_appended():
    ns = a_namespace()
    ns["spec"] = {"finalizers": ["example.com/cleanup"]}
    assert created(namespaces(), ns)["spec"]["finalizers"] == ["example.com/cleanup", "kubernetes"]


@pytest.mark.parametrize("name, ok", [("team-a", True), ("team.a", False), ("Team", False), ("a" * 64, False)],
                         ids=["a DNS label", "dots are not allowed", "capitals are not", "64 characters are too many"])
def test_namespace_names_are_dns_labels(name, ok):
    assert (create(namespaces(), a_namespace(name)) == []) is ok


def test_an_unqualified_unknown_finalizer_is_rejected():
    ns = a_namespace()
    ns["spec"] = {"finalizers": ["cleanup"]}
    assert 'spec.finalizers: Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified' \
        in messages(create(namespaces(), ns))


def test_a_plain_update_keeps_finalizers_and_status_and_restores_the_name_label():
    s = namespaces()
    old = created(s, a_namespace())
    new = edited(old)
    new["spec"]["finalizers"] = []
    new["status"] = {"phase": "Terminating"}
    new["metadata"]["labels"] = {"team": "a"}
    assert update(s, new, old) == []
    assert new["spec"]["finalizers"] == ["kubernetes"]
    assert new["status"] == {"phase": "Active"}
    assert new["metadata"]["labels"] == {"team": "a", "kubernetes.io/metadata.name": "team-a"}


def test_finalize_changes_only_the_finalizers():
    s = namespaces().finalize_strategy()
    old = created(namespaces(), a_namespace())
    new = edited(old)
    new["spec"]["finalizers"] = []
    new["metadata"]["labels"]["extra"] = "ignored"
    assert update(s, new, old) == []
    assert "finalizers" not in new["spec"]
    assert "extra" not in new["metadata"]["labels"]


def test_finalize_checks_each_finalizer_by_index():
    s = strategy("", "namespaces/finalize", namespaced=False)
    old = created(namespaces(), a_namespace())
    new = edited(old)
    new["spec"]["finalizers"] = ["kubernetes", "bad"]
    assert messages(update(s, new, old)) == [
        'spec.finalizers[1]: Invalid value: "bad": name is neither a standard finalizer name nor is it fully qualified']


@pytest.mark.parametrize("deleting, phase, expected", [
    (False, "Active", []),
    (False, "Terminating", ["status.Phase: Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty"]),
    (True, "Terminating", []),
    (True, "Active", ["status.Phase: Invalid value: \"Active\": may only be 'Terminating' if `deletionTimestamp` is not empty"]),
], ids=["live and active", "live but terminating", "deleting and terminating", "deleting but active"])
def test_status_phase_follows_deletion(deleting, phase, expected):
    old = created(namespaces(), a_namespace())
    if deleting:
        old["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    new = edited(old)
    new["status"] = {"phase": phase}
    assert messages(update(namespaces().status_strategy(), new, old)) == expected


async def test_a_namespace_made_from_generate_name_carries_its_name_label(api):
    """The label follows the generated name (upstream sets it in Canonicalize, after generateName),
    also when the namespace brings labels of its own — label selectors on the name must find it."""
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": "team-", "labels": {"team": "a"}}}
    status, ns, _ = await api.request("POST", "/api/v1/namespaces", json=body)
    assert status == 201, ns
    name = ns["metadata"]["name"]
    assert name.startswith("team-") and ns["metadata"]["labels"] == {"team": "a", "kubernetes.io/metadata.name": name}
    status, found, _ = await api.request("GET", f"/api/v1/namespaces?labelSelector=kubernetes.io/metadata.name={name}")
    assert [n["metadata"]["name"] for n in found["items"]] == [name]
