"""Jobs and CronJobs: defaults, generated selector and labels, schedule checks, update rules."""

from __future__ import annotations

from typing import Any

import pytest

from tests.apiserver.kinds.writes import create, created, edited, messages, strategy, update

UID = "11111111-2222-3333-4444-555555555555"


def pod_template(restart: str = "Never") -> dict[str, Any]:
    return {"spec": {"restartPolicy": restart, "containers": [{"name": "work", "image": "busybox"}]}}


def a_job(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"template": pod_template()}
    body.update(spec)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi", "namespace": "default"}, "spec": body}


def jobs():
    return strategy("batch", "jobs")


def test_a_job_gets_its_defaults():
    spec = created(jobs(), a_job())["spec"]
    assert {k: spec[k] for k in ("completions", "parallelism", "backoffLimit", "completionMode", "suspend",
                                 "podReplacementPolicy", "manualSelector")} == {
        "completions": 1, "parallelism": 1, "backoffLimit": 6, "completionMode": "NonIndexed", "suspend": False,
        "podReplacementPolicy": "TerminatingOrFailed", "manualSelector": False}


def test_parallelism_alone_leaves_completions_unset():
    spec = created(jobs(), a_job(parallelism=3))["spec"]
    assert "completions" not in spec and spec["parallelism"] == 3


def test_the_selector_and_the_four_labels_are_generated_from_uid_and_name():
    job = created(jobs(), a_job())
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": UID}}
    assert job["spec"]["template"]["metadata"]["labels"] == {
        "job-name": "pi", "batch.kubernetes.io/job-name": "pi", "controller-uid": UID,
        "batch.kubernetes.io/controller-uid": UID}
    assert job["metadata"]["generation"] == 1


def test_job_labels_come_from_the_template_when_the_job_has_none():
    body = a_job()
    body["spec"]["template"]["metadata"] = {"labels": {"app": "pi"}}
    assert created(jobs(), body)["metadata"]["labels"] == {"app": "pi"}


def test_a_user_selector_without_manual_selector_is_refused():
    causes = create(jobs(), a_job(selector={"matchLabels": {"app": "pi"}}))
    assert 'spec.selector: Invalid value: {"matchLabels":{"app":"pi","batch.kubernetes.io/controller-uid":"' + UID + \
        '"}}: `selector` not auto-generated' in messages(causes)


def test_a_manual_selector_must_match_the_template():
    body = a_job(manualSelector=True, selector={"matchLabels": {"app": "pi"}})
    body["spec"]["template"]["metadata"] = {"labels": {"app": "other"}}
    assert messages(create(jobs(), body)) == [
        'spec.template.metadata.labels: Invalid value: {"app":"other"}: `selector` does not match template `labels`']


def test_a_job_pod_may_not_restart_always():
    assert messages(create(jobs(), a_job(template=pod_template("Always")))) == [
        'spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"']


def test_the_template_of_a_running_job_is_immutable():
    s = jobs()
    old = created(s, a_job())
    new = edited(old)
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "alpine"
    causes = update(s, new, old)
    assert [c["field"] for c in causes] == ["spec.template"]
    assert causes[0]["message"].startswith("Invalid value: {") and causes[0]["message"].endswith("}: field is immutable")


def test_a_suspended_job_that_never_started_may_change_scheduling_directives_only():
    s = jobs()
    old = created(s, a_job(suspend=True))
    placed, reimaged = edited(old), edited(old)
    placed["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "a"}
    placed["spec"]["template"]["metadata"]["labels"]["extra"] = "yes"
    reimaged["spec"]["template"]["spec"]["containers"][0]["image"] = "alpine"
    assert update(s, placed, old) == []
    assert [c["field"] for c in update(s, reimaged, edited(old))] == ["spec.template"]


@pytest.mark.parametrize("field, value, expected", [
    ("selector", {"matchLabels": {"x": "y"}}, "spec.selector"),
    ("completionMode", "Indexed", "spec.completionMode"),
    ("completions", 5, "spec.completions"),
], ids=["the selector", "the completion mode", "completions of a non-indexed job"])
def test_job_fields_that_never_change(field, value, expected):
    s = jobs()
    old = created(s, a_job())
    new = edited(old)
    new["spec"][field] = value
    assert expected in [c["field"] for c in update(s, new, old)]


def test_an_indexed_job_may_scale_completions_with_parallelism():
    s = jobs()
    old = created(s, a_job(completionMode="Indexed", completions=3, parallelism=3))
    new = edited(old)
    new["spec"]["completions"] = new["spec"]["parallelism"] = 5
    assert update(s, new, old) == []


def cronjobs():
    return strategy("batch", "cronjobs")


def a_cronjob(schedule: str = "*/5 * * * *", name: str = "tick", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"schedule": schedule, "jobTemplate": {"spec": {"template": pod_template("OnFailure")}}}
    body.update(spec)
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name, "namespace": "default"}, "spec": body}


def test_a_cronjob_gets_its_defaults_and_its_pod_template_too():
    spec = created(cronjobs(), a_cronjob())["spec"]
    assert {k: spec[k] for k in ("concurrencyPolicy", "suspend", "successfulJobsHistoryLimit", "failedJobsHistoryLimit")} == {
        "concurrencyPolicy": "Allow", "suspend": False, "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1}
    job_spec = spec["jobTemplate"]["spec"]
    assert job_spec["template"]["spec"]["dnsPolicy"] == "ClusterFirst"
    assert "backoffLimit" not in job_spec


@pytest.mark.parametrize("schedule, expected", [
    ("@hourly", []),
    ("0 0 * * MON-FRI", []),
    ("every minute", ['spec.schedule: Invalid value: "every minute": expected exactly 5 fields, found 2: [every minute]']),
    ("61 * * * *", ['spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61']),
    ("TZ=UTC 0 * * * *", ['spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead']),
    ("", ["spec.schedule: Required value"]),
], ids=["a descriptor", "day names in a range", "words are not a schedule", "minutes stop at 59",
        "time zones go in timeZone", "a schedule is required"])
def test_cronjob_schedules(schedule, expected):
    assert messages(create(cronjobs(), a_cronjob(schedule))) == expected


def test_cronjob_names_stop_at_52_characters():
    name = "a" * 53
    assert messages(create(cronjobs(), a_cronjob(name=name))) == [
        f'metadata.name: Invalid value: "{name}": must be no more than 52 characters']


def test_a_cronjob_job_template_may_not_choose_its_selector():
    body = a_cronjob()
    body["spec"]["jobTemplate"]["spec"]["selector"] = {"matchLabels": {"a": "b"}}
    body["spec"]["jobTemplate"]["spec"]["template"]["metadata"] = {"labels": {"a": "b"}}
    assert messages(create(cronjobs(), body)) == [
        'spec.jobTemplate.spec.selector: Invalid value: {"matchLabels":{"a":"b"}}: `selector` will be auto-generated']


def test_concurrency_policy_is_an_enum():
    assert messages(create(cronjobs(), a_cronjob(concurrencyPolicy="Sometimes"))) == [
        'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"']


@pytest.mark.parametrize("mode, completions, parallelism, expected", [
    ("Indexed", 5, 3, ["spec.completions: Invalid value: 5: can only be modified in tandem with spec.parallelism"]),
    ("Indexed", 3, 5, []),
    ("NonIndexed", 5, 5, ["spec.completions: Invalid value: 5: field is immutable"]),
], ids=["an indexed job's completions move only with parallelism", "its parallelism alone may change",
        "a non-indexed job's completions never change"])
def test_completions_on_update(mode, completions, parallelism, expected):
    s = jobs()
    old = created(s, a_job(completionMode=mode, completions=3, parallelism=3))
    new = edited(old)
    new["spec"]["completions"], new["spec"]["parallelism"] = completions, parallelism
    assert messages(update(s, new, old)) == expected
