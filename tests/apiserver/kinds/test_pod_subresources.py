"""pods/ephemeralcontainers and pods/resize: only their part of the pod changes."""

from __future__ import annotations

from typing import Any

import pytest

from tests.apiserver.kinds.test_pod import a_pod
from tests.apiserver.kinds.writes import created, edited, messages, strategy, update


def stored(**spec: Any) -> dict[str, Any]:
    return created(strategy("", "pods"), a_pod(**spec))


def ephemeral():
    return strategy("", "pods/ephemeralcontainers")


def resize():
    return strategy("", "pods").resize_strategy()


def test_adding_an_ephemeral_container_changes_only_that_list_and_bumps_generation():
    old = stored()
    new = edited(old)
    new["spec"]["ephemeralContainers"] = [{"name": "debugger", "image": "busybox", "targetContainerName": "app"}]
    new["spec"]["containers"][0]["image"] = "ignored"
    new["metadata"]["labels"] = {"ignored": "too"}
    assert update(ephemeral(), new, old) == []
    assert new["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert "labels" not in new["metadata"]
    assert new["spec"]["ephemeralContainers"][0]["terminationMessagePolicy"] == "File"
    assert new["metadata"]["generation"] == 2


def test_an_existing_ephemeral_container_may_not_be_removed():
    old = stored()
    old["spec"]["ephemeralContainers"] = [{"name": "debugger", "image": "busybox"}]
    new = edited(old)
    new["spec"]["ephemeralContainers"] = []
    assert messages(update(ephemeral(), new, old)) == [
        'spec.ephemeralContainers: Forbidden: existing ephemeral containers "debugger" may not be removed\n']


def test_an_existing_ephemeral_container_may_not_be_changed():
    s = ephemeral()
    old = stored()
    first = edited(old)
    first["spec"]["ephemeralContainers"] = [{"name": "debugger", "image": "busybox"}]
    assert update(s, first, old) == []
    second = edited(first)
    second["spec"]["ephemeralContainers"][0]["image"] = "alpine"
    causes = update(s, second, first)
    assert len(causes) == 1
    assert causes[0]["message"].startswith('Forbidden: existing ephemeral containers "debugger" may not be changed\n')


@pytest.mark.parametrize("field", ["ports", "resources", "livenessProbe", "lifecycle"])
def test_ephemeral_containers_may_not_set_what_only_long_running_containers_use(field):
    old = stored()
    new = edited(old)
    value = {"ports": [{"containerPort": 80}], "resources": {"limits": {"cpu": "1"}},
             "livenessProbe": {"exec": {"command": ["true"]}}, "lifecycle": {"preStop": {"exec": {"command": ["x"]}}}}[field]
    new["spec"]["ephemeralContainers"] = [{"name": "dbg", "image": "busybox", field: value}]
    assert f"spec.ephemeralContainers[0].{field}: Forbidden: cannot be set for an Ephemeral Container" \
        in messages(update(ephemeral(), new, old))


def burstable() -> dict[str, Any]:
    return stored(containers=[{"name": "app", "image": "nginx",
                               "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                                             "limits": {"cpu": "1", "memory": "256Mi"}}}])


def test_resizing_cpu_takes_only_the_resources():
    old = burstable()
    new = edited(old)
    new["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "200m"
    new["spec"]["containers"][0]["image"] = "ignored"
    assert update(resize(), new, old) == []
    assert new["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "200m"
    assert new["spec"]["containers"][0]["image"] == "nginx"
    assert new["metadata"]["generation"] == 2


@pytest.mark.parametrize("change, expected", [
    (lambda r: r["limits"].update(memory="128Mi"),
     ["spec.containers[0].resources.limits[memory]: Forbidden: memory limits cannot be decreased unless resizePolicy is RestartContainer"]),
    (lambda r: r["limits"].pop("memory") and r["requests"].pop("memory"),
     ["spec.containers[0].resources.requests: Forbidden: resource requests cannot be removed",
      "spec.containers[0].resources.limits: Forbidden: resource limits cannot be removed"]),
    (lambda r: r["limits"].update({"example.com/fpga": "1"}) or r["requests"].update({"example.com/fpga": "1"}),
     ["spec: Forbidden: only cpu and memory resources are mutable"]),
    (lambda r: r.update(requests={"cpu": "1", "memory": "256Mi"}),
     ['spec: Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing']),
], ids=["memory limits may not shrink under NotRequired", "requests and limits may not be removed (limits would re-default them)",
        "only cpu and memory may change", "the QoS class may not change"])
def test_what_a_resize_may_not_do(change, expected):
    old = burstable()
    new = edited(old)
    change(new["spec"]["containers"][0]["resources"])
    assert messages(update(resize(), new, old)) == expected
