"""The namespace conditions: upstream's texts for each failure, the all-well variants, and
merging that keeps lastTransitionTime unless a status flips."""

from __future__ import annotations

from typing import Any

from collections import Counter

from controllers import namespace_conditions as cond


def _by_type(conditions: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in conditions}


def test_a_clean_pass_sets_all_five_conditions_false_with_their_all_well_reasons() -> None:
    conditions = cond.conditions(cond.Content())
    assert [c["type"] for c in conditions] == list(cond.TYPES)
    assert {c["type"]: (c["status"], c["reason"]) for c in conditions} == {
        "NamespaceDeletionDiscoveryFailure": ("False", "ResourcesDiscovered"),
        "NamespaceDeletionGroupVersionParsingFailure": ("False", "ParsedGroupVersions"),
        "NamespaceDeletionContentFailure": ("False", "ContentDeleted"),
        "NamespaceContentRemaining": ("False", "ContentRemoved"),
        "NamespaceFinalizersRemaining": ("False", "ContentHasNoFinalizers"),
    }


def test_each_problem_is_reported_with_upstreams_message() -> None:
    content = cond.Content(
        discovery_failures={"metrics.k8s.io/v1beta1": "503 ServiceUnavailable"},
        delete_errors=["widgets.example.com: 500 InternalError: boom"],
        remaining=Counter({"pods.": 2, "widgets.example.com": 1}),
        finalizers=Counter({"example.com/b": 1, "example.com/a": 2}),
    )
    found = _by_type(cond.conditions(content))
    assert found["NamespaceDeletionDiscoveryFailure"]["message"] == \
        "Discovery failed for some groups, 1 failing: metrics.k8s.io/v1beta1: 503 ServiceUnavailable"
    assert found["NamespaceDeletionContentFailure"]["message"] == \
        "Failed to delete all resource types, 1 remaining: widgets.example.com: 500 InternalError: boom"
    assert found["NamespaceContentRemaining"]["message"] == \
        "Some resources are remaining: pods. has 2 resource instances, widgets.example.com has 1 resource instances"
    assert found["NamespaceFinalizersRemaining"]["message"] == \
        "Some content in the namespace has finalizers remaining: example.com/a in 2 resource instances, " \
        "example.com/b in 1 resource instances"
    assert not content.done


def test_merging_keeps_the_transition_time_unless_the_status_flips_and_leaves_other_types_alone() -> None:
    old = [{"type": "NamespaceContentRemaining", "status": "True", "lastTransitionTime": "2020-01-01T00:00:00Z",
            "reason": "SomeResourcesRemain", "message": "Some resources are remaining: pods. has 2 resource instances"},
           {"type": "SomethingElse", "status": "True"}]
    still = cond.conditions(cond.Content(remaining=Counter({"pods.": 1})))
    merged, changed = cond.merge(old, still)
    remaining = _by_type(merged)["NamespaceContentRemaining"]
    assert changed and remaining["lastTransitionTime"] == "2020-01-01T00:00:00Z"
    assert remaining["message"].endswith("pods. has 1 resource instances")
    assert _by_type(merged)["SomethingElse"] == {"type": "SomethingElse", "status": "True"}

    flipped, _ = cond.merge(merged, cond.conditions(cond.Content()))
    assert _by_type(flipped)["NamespaceContentRemaining"]["lastTransitionTime"] != "2020-01-01T00:00:00Z"
    again, changed_again = cond.merge(flipped, cond.conditions(cond.Content()))
    assert not changed_again and again == flipped
