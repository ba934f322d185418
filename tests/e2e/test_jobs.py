"""Jobs end to end under `haru up`, judged by kubectl v1.36.3: the scheduler binds the pods,
the hollow nodes run them (`sh -c "exit 0"` succeeds, `exit 3` fails) and the Job controller
counts them; `kubectl wait --for=condition=complete|failed` returns. A Job made from a CronJob
with `kubectl create job --from=cronjob/x` runs too.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import Cluster

pytestmark = pytest.mark.slow


def _wait(haru: Cluster, ns: str, job: str, condition: str, timeout: float = 90) -> str:
    return haru.kubectl("-n", ns, "wait", f"--for=condition={condition}", f"job/{job}", f"--timeout={int(timeout)}s",
                        timeout=timeout + 10).stdout.strip()


def _ns(haru: Cluster, name: str) -> str:
    haru.kubectl("create", "namespace", name)
    return name


def _job(haru: Cluster, ns: str, name: str) -> dict[str, Any]:
    job: dict[str, Any] = json.loads(haru.kubectl("-n", ns, "get", "job", name, "-o", "json").stdout)
    return job


def test_kubectl_create_job_runs_to_complete(haru: Cluster) -> None:
    ns = _ns(haru, "jobs-pi")
    haru.kubectl("-n", ns, "create", "job", "pi", "--image=busybox", "--", "sh", "-c", "exit 0")

    assert _wait(haru, ns, "pi", "complete") == "job.batch/pi condition met"

    status = _job(haru, ns, "pi")["status"]
    assert [(c["type"], c["reason"]) for c in status["conditions"]] == [
        ("SuccessCriteriaMet", "CompletionsReached"), ("Complete", "CompletionsReached")]
    assert (status["succeeded"], status["ready"], status["terminating"], status["uncountedTerminatedPods"]) == (1, 0, 0, {})
    table = haru.kubectl("-n", ns, "get", "job", "pi").stdout.splitlines()
    assert table[0].split() == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    assert table[1].split()[:3] == ["pi", "Complete", "1/1"]
    events = haru.kubectl("-n", ns, "get", "events", "--field-selector", "involvedObject.kind=Job", "-o", "json").stdout
    reasons = {(e["reason"], e["message"]) for e in json.loads(events)["items"]}
    assert ("Completed", "Job completed") in reasons
    assert any(reason == "SuccessfulCreate" and message.startswith("Created pod: pi-") for reason, message in reasons)
    pods = json.loads(haru.kubectl("-n", ns, "get", "pods", "-o", "json").stdout)["items"]
    assert [p["status"]["phase"] for p in pods] == ["Succeeded"]
    assert "batch.kubernetes.io/job-tracking" not in (pods[0]["metadata"].get("finalizers") or [])


INDEXED = """
apiVersion: batch/v1
kind: Job
metadata: {name: indexed}
spec:
  completions: 3
  parallelism: 3
  completionMode: Indexed
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: busybox, command: [sh, -c, "exit 0"]}
"""


def test_an_indexed_job_completes_every_index(haru: Cluster) -> None:
    ns = _ns(haru, "jobs-indexed")
    haru.kubectl("-n", ns, "apply", "-f", "-", input=INDEXED)

    _wait(haru, ns, "indexed", "complete")

    status = _job(haru, ns, "indexed")["status"]
    assert (status["completedIndexes"], status["succeeded"]) == ("0-2", 3)
    pods = json.loads(haru.kubectl("-n", ns, "get", "pods", "-o", "json").stdout)["items"]
    indexes = sorted(p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] for p in pods)
    assert indexes == ["0", "1", "2"]
    assert sorted(p["spec"]["hostname"] for p in pods) == ["indexed-0", "indexed-1", "indexed-2"]


FAILING = """
apiVersion: batch/v1
kind: Job
metadata: {name: failing}
spec:
  backoffLimit: 1
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: busybox, command: [sh, -c, "exit 3"]}
"""


def test_a_failing_job_reaches_its_backoff_limit(haru: Cluster) -> None:
    ns = _ns(haru, "jobs-failing")
    haru.kubectl("-n", ns, "apply", "-f", "-", input=FAILING)

    # The replacement waits the real first backoff step (10 s).
    _wait(haru, ns, "failing", "failed")

    job = _job(haru, ns, "failing")
    failed = [c for c in job["status"]["conditions"] if c["type"] == "Failed"]
    assert [(c["reason"], c["message"]) for c in failed] == [
        ("BackoffLimitExceeded", "Job has reached the specified backoff limit")]
    assert job["status"]["failed"] == 2
    described = haru.kubectl("-n", ns, "describe", "job", "failing").stdout
    assert "BackoffLimitExceeded" in described and "Job has reached the specified backoff limit" in described


def test_a_job_created_from_a_cronjob_runs_to_complete(haru: Cluster) -> None:
    ns = _ns(haru, "jobs-from-cron")
    haru.kubectl("-n", ns, "create", "cronjob", "nightly", "--image=busybox", "--schedule=0 3 * * *", "--",
                 "sh", "-c", "exit 0")

    haru.kubectl("-n", ns, "create", "job", "nightly-now", "--from=cronjob/nightly")

    assert _wait(haru, ns, "nightly-now", "complete") == "job.batch/nightly-now condition met"
    job = _job(haru, ns, "nightly-now")
    assert job["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
    assert [(r["kind"], r["name"]) for r in job["metadata"]["ownerReferences"]] == [("CronJob", "nightly")]
