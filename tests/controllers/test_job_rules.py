"""The pure parts of the Job controller: backoff delays, completion index intervals, pod failure
policy matching (exit codes, conditions, messages) and success policy rules."""

from __future__ import annotations

from typing import Any

import pytest

from controllers import job_backoff, job_failure_policy, job_indexes, job_success_policy

DELAYS = [
    ("no failure means no wait", 0, 0.0),
    ("the first failure waits the base", 1, 10.0),
    ("each further failure doubles the wait", 3, 40.0),
    ("the wait stops at the cap", 7, 600.0),
    ("a huge count stays at the cap", 10_000, 600.0),
]


@pytest.mark.parametrize(("case", "failures", "want"), DELAYS, ids=[c[0] for c in DELAYS])
def test_backoff_delay(case: str, failures: int, want: float) -> None:
    assert job_backoff.delay(failures) == want


def test_a_success_resets_the_backoff_and_failures_after_it_count_again() -> None:
    record = job_backoff.Record()
    record.update([(False, 100.0), (False, 101.0)])
    assert record.remaining(105.0) == 101.0 + 20.0 - 105.0
    record.update([(True, 110.0)])
    assert record.remaining(110.0) == 0.0
    record.update([(False, 120.0)])
    assert record.remaining(125.0) == 5.0


INTERVALS = [
    ("an empty text is no index", "", None, set(), ""),
    ("single indexes and runs", "1,3-5,7", None, {1, 3, 4, 5, 7}, "1,3-5,7"),
    ("two neighbours are written as a run", "2,3", None, {2, 3}, "2-3"),
    ("indexes past completions are dropped", "0-9", 4, {0, 1, 2, 3}, "0-3"),
    ("a malformed part is skipped", "1,x,3", None, {1, 3}, "1,3"),
]


@pytest.mark.parametrize(("case", "text", "completions", "indexes", "formatted"), INTERVALS, ids=[c[0] for c in INTERVALS])
def test_completed_indexes_text(case: str, text: str, completions: int | None, indexes: set[int], formatted: str) -> None:
    assert job_indexes.parse(text, completions) == indexes
    assert job_indexes.format(indexes) == formatted


@pytest.mark.parametrize(("value", "want"), [("3", 3), ("03", None), ("-1", None), ("x", None), (None, None)])
def test_the_index_of_a_pod_comes_from_its_annotation(value: str | None, want: int | None) -> None:
    annotations = {job_indexes.INDEX_KEY: value} if value is not None else {}
    assert job_indexes.index_of({"metadata": {"annotations": annotations}}) == want


def _failed_pod(exit_code: int, container: str = "main", conditions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": "p", "namespace": "ns"}, "status": {
        "phase": "Failed", "conditions": conditions or [],
        "containerStatuses": [{"name": container, "state": {"terminated": {"exitCode": exit_code}}}]}}


DISRUPTED = [{"type": "DisruptionTarget", "status": "True"}]
POLICY = {"rules": [
    {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
    {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [42]}},
    {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [1, 2]}},
    {"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [2]}},
]}
MATCHES = [
    ("a disruption matches Ignore, which does not count", _failed_pod(137, conditions=DISRUPTED), ("Ignore", 0, False)),
    ("an exit code In the values of the named container fails the job", _failed_pod(42), ("FailJob", 1, True)),
    ("the same code from another container does not match that rule", _failed_pod(42, "sidecar"), ("Count", 2, True)),
    ("NotIn matches a code outside the values", _failed_pod(3), ("Count", 2, True)),
    ("a later rule is reached when earlier ones do not match", _failed_pod(2), ("FailIndex", 3, True)),
    ("a code no rule names matches nothing", _failed_pod(1), None),
]


@pytest.mark.parametrize(("case", "pod", "want"), MATCHES, ids=[c[0] for c in MATCHES])
def test_pod_failure_policy_matching(case: str, pod: dict[str, Any], want: tuple[str, int, bool] | None) -> None:
    got = job_failure_policy.match(POLICY, pod)
    assert (None if got is None else (got.action, got.rule, got.counts)) == want


def test_the_messages_name_the_container_code_action_and_rule() -> None:
    got = job_failure_policy.match(POLICY, _failed_pod(42))
    assert got is not None
    assert got.message == "Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 1"
    condition_rule = {"rules": [{"action": "FailJob", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]}
    by_condition = job_failure_policy.match(condition_rule, _failed_pod(137, conditions=DISRUPTED))
    assert by_condition is not None
    assert by_condition.message == "Pod ns/p has condition DisruptionTarget matching FailJob rule at index 0"


def test_a_zero_exit_code_never_matches_not_in() -> None:
    pod = _failed_pod(0)
    assert job_failure_policy.match({"rules": [{"action": "FailJob", "onExitCodes": {"operator": "NotIn", "values": [5]}}]}, pod) is None


SUCCESS = [
    ("all named indexes succeeded", [{"succeededIndexes": "0-2"}], {0, 1, 2}, "Matched rules at index 0"),
    ("one named index missing is not enough", [{"succeededIndexes": "0-2"}], {0, 2}, None),
    ("a count within the named indexes", [{"succeededIndexes": "0-4", "succeededCount": 2}], {1, 3}, "Matched rules at index 0"),
    ("a bare count over all indexes", [{"succeededCount": 3}], {0, 5, 9}, "Matched rules at index 0"),
    ("the first rule that holds is named", [{"succeededIndexes": "9"}, {"succeededCount": 1}], {4}, "Matched rules at index 1"),
    ("successes outside the named indexes do not count", [{"succeededIndexes": "0", "succeededCount": 1}], {1, 2}, None),
]


@pytest.mark.parametrize(("case", "rules", "succeeded", "want"), SUCCESS, ids=[c[0] for c in SUCCESS])
def test_success_policy_rules(case: str, rules: list[dict[str, Any]], succeeded: set[int], want: str | None) -> None:
    assert job_success_policy.matched({"rules": rules}, 10, succeeded) == want
