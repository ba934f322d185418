"""The built-in plugins on a fake cluster: Priority, LimitRanger, ResourceQuota — their effects
on pods and their refusals, with upstream's messages."""

from __future__ import annotations

from typing import Any

import pytest

from admission import errors
from admission.plugins.limit_ranger import ANNOTATION, LimitRangerPlugin
from admission.plugins.priority import SYSTEM_CLASSES, PriorityPlugin, system_class
from admission.plugins.resource_quota import ResourceQuotaPlugin
from tests.admission.fakes import FakeView, attrs, pod


def _classes(view: FakeView, *extra: dict[str, Any]) -> None:
    for name in SYSTEM_CLASSES:
        view.put("scheduling.k8s.io", "priorityclasses", system_class(name))
    for pc in extra:
        view.put("scheduling.k8s.io", "priorityclasses", pc)


def _pc(name: str, value: int, **more: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "value": value, "preemptionPolicy": "PreemptLowerPriority", **more}


# -- Priority --------------------------------------------------------------------------------------

def test_a_named_class_gives_its_value_and_preemption_policy():
    view = FakeView()
    _classes(view, _pc("batch", 100, preemptionPolicy="Never"))
    request = attrs(pod())
    request.object["spec"]["priorityClassName"] = "batch"
    PriorityPlugin(view).admit(request)
    assert (request.object["spec"]["priority"], request.object["spec"]["preemptionPolicy"]) == (100, "Never")


def test_without_a_name_the_global_default_applies_and_is_named():
    view = FakeView()
    _classes(view, _pc("low-default", 10, globalDefault=True), _pc("high-default", 20, globalDefault=True))
    request = attrs(pod())
    PriorityPlugin(view).admit(request)
    assert request.object["spec"]["priorityClassName"] == "low-default"
    assert request.object["spec"]["priority"] == 10


def test_without_any_default_priority_is_zero():
    view = FakeView()
    _classes(view)
    request = attrs(pod())
    PriorityPlugin(view).admit(request)
    assert request.object["spec"]["priority"] == 0 and "priorityClassName" not in request.object["spec"]


@pytest.mark.parametrize("spec, message", [
    ({"priorityClassName": "missing"}, 'pods "p" is forbidden: no PriorityClass with name missing was found'),
    ({"priority": 7}, 'pods "p" is forbidden: the integer value of priority (7) must not be provided in pod spec; '
                      "priority admission controller computed 0 from the given PriorityClass name"),
    ({"priorityClassName": "system-node-critical", "preemptionPolicy": "Never"},
     'pods "p" is forbidden: the string value of PreemptionPolicy (Never) must not be provided in pod spec; '
     "priority admission controller computed PreemptLowerPriority from the given PriorityClass name"),
])
def test_refusals(spec, message):
    view = FakeView()
    _classes(view)
    request = attrs(pod())
    request.object["spec"].update(spec)
    with pytest.raises(errors.Rejection) as refused:
        PriorityPlugin(view).admit(request)
    assert (refused.value.code, refused.value.message) == (403, message)


def test_a_priority_equal_to_the_computed_one_is_accepted():
    view = FakeView()
    _classes(view)
    request = attrs(pod())
    request.object["spec"].update({"priorityClassName": "system-cluster-critical", "priority": 2000000000})
    PriorityPlugin(view).admit(request)


def test_only_one_class_may_be_the_global_default():
    view = FakeView()
    _classes(view, _pc("default", 1, globalDefault=True))
    second = attrs(_pc("another", 2, globalDefault=True), group="scheduling.k8s.io", resource="priorityclasses",
                   kind="PriorityClass", namespace="")
    with pytest.raises(errors.Rejection) as refused:
        PriorityPlugin(view).validate(second)
    assert refused.value.message == ('priorityclasses.scheduling.k8s.io "another" is forbidden: PriorityClass default '
                                     "is already marked as default. Only one default can exist")
    same = attrs(_pc("default", 1, globalDefault=True), operation="UPDATE", group="scheduling.k8s.io",
                 resource="priorityclasses", kind="PriorityClass", namespace="")
    PriorityPlugin(view).validate(same)


def test_an_update_keeps_the_priority_the_create_set():
    request = attrs(pod(), operation="UPDATE", old={**pod(), "spec": {**pod()["spec"], "priority": 5}})
    PriorityPlugin(FakeView()).admit(request)
    assert request.object["spec"]["priority"] == 5


# -- LimitRanger -----------------------------------------------------------------------------------

def _limit_range(view: FakeView, *limits: dict[str, Any]) -> None:
    view.put("", "limitranges", {"metadata": {"name": "lr", "namespace": "default"}, "spec": {"limits": list(limits)}})


def test_container_defaults_fill_what_containers_leave_out_and_are_annotated():
    view = FakeView()
    _limit_range(view, {"type": "Container", "default": {"cpu": "0.5", "memory": "128Mi"},
                        "defaultRequest": {"cpu": "100m"}})
    request = attrs(pod(containers=[{"name": "a", "image": "x", "resources": {"limits": {"memory": "1Gi"}}}]))
    LimitRangerPlugin(view).admit(request)
    assert request.object["spec"]["containers"][0]["resources"] == {
        "limits": {"memory": "1Gi", "cpu": "500m"}, "requests": {"cpu": "100m", "memory": "128Mi"}}
    assert request.object["metadata"]["annotations"][ANNOTATION] == (
        "LimitRanger plugin set: cpu, memory request for container a; cpu limit for container a")


def test_max_defaults_the_limit_as_the_api_defaults_a_limit_range():
    view = FakeView()
    _limit_range(view, {"type": "Container", "max": {"cpu": "1"}})
    request = attrs(pod())
    LimitRangerPlugin(view).admit(request)
    assert request.object["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}


@pytest.mark.parametrize("item, resources, message", [
    ({"type": "Container", "max": {"cpu": "500m"}}, {"limits": {"cpu": "1"}, "requests": {"cpu": "100m"}},
     "maximum cpu usage per Container is 500m, but limit is 1"),
    ({"type": "Container", "min": {"memory": "64Mi"}}, {"requests": {"memory": "32Mi"}},
     "minimum memory usage per Container is 64Mi, but request is 32Mi"),
    ({"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}}, {"limits": {"cpu": "1"}, "requests": {"cpu": "250m"}},
     "cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000"),
    ({"type": "Pod", "max": {"cpu": "1"}}, {"limits": {"cpu": "2"}, "requests": {"cpu": "2"}},
     "maximum cpu usage per Pod is 1, but limit is 2"),
])
def test_limit_violations(item, resources, message):
    view = FakeView()
    _limit_range(view, item)
    request = attrs(pod(containers=[{"name": "c", "image": "x", "resources": resources}]))
    with pytest.raises(errors.Rejection) as refused:
        LimitRangerPlugin(view).validate(request)
    assert refused.value.message == f'pods "p" is forbidden: {message}'


def test_several_violations_are_listed_together():
    view = FakeView()
    _limit_range(view, {"type": "Container", "max": {"cpu": "1", "memory": "1Gi"}})
    request = attrs(pod(containers=[{"name": "c", "image": "x", "resources": {"limits": {"cpu": "2", "memory": "2Gi"}}}]))
    with pytest.raises(errors.Rejection) as refused:
        LimitRangerPlugin(view).validate(request)
    assert refused.value.message == ('pods "p" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, '
                                     "maximum memory usage per Container is 1Gi, but limit is 2Gi]")


def test_claims_are_held_to_storage_bounds():
    view = FakeView()
    _limit_range(view, {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "10Gi"}})
    claim = {"metadata": {"name": "data", "namespace": "default"},
             "spec": {"resources": {"requests": {"storage": "20Gi"}}}}
    with pytest.raises(errors.Rejection) as refused:
        LimitRangerPlugin(view).validate(attrs(claim, resource="persistentvolumeclaims", kind="PersistentVolumeClaim"))
    assert refused.value.message.endswith("maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi")


# -- ResourceQuota ---------------------------------------------------------------------------------

def _quota(view: FakeView, hard: dict[str, str], **spec: Any) -> dict[str, Any]:
    return view.put("", "resourcequotas", {"metadata": {"name": "q", "namespace": "default"},
                                           "spec": {"hard": hard, **spec}})


def _sized(name: str, cpu: str) -> dict[str, Any]:
    return pod(name, containers=[{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu},
                                                                          "limits": {"cpu": cpu}}}])


def test_a_create_past_the_hard_limit_is_refused_with_the_usage():
    view = FakeView()
    _quota(view, {"requests.cpu": "1", "pods": "5"})
    view.put("", "pods", _sized("running", "800m"))
    with pytest.raises(errors.Rejection) as refused:
        ResourceQuotaPlugin(view).validate(attrs(_sized("new", "300m")))
    assert refused.value.code == 403
    assert refused.value.message == ('pods "new" is forbidden: exceeded quota: q, requested: requests.cpu=300m, '
                                     "used: requests.cpu=800m, limited: requests.cpu=1")


def test_admitted_creates_count_before_they_are_stored():
    view = FakeView()
    _quota(view, {"pods": "1"})
    plugin = ResourceQuotaPlugin(view)
    plugin.validate(attrs(pod("first")))
    with pytest.raises(errors.Rejection) as refused:
        plugin.validate(attrs(pod("second")))
    assert "exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1" in refused.value.message


def test_a_dry_run_reserves_nothing():
    view = FakeView()
    _quota(view, {"pods": "1"})
    plugin = ResourceQuotaPlugin(view)
    dry = attrs(pod("first"))
    dry.dry_run = True
    plugin.validate(dry)
    plugin.validate(attrs(pod("second")))


def test_terminal_pods_free_their_compute_but_keep_their_count():
    view = FakeView()
    done = _sized("done", "900m")
    done["status"] = {"phase": "Succeeded"}
    view.put("", "pods", done)
    quota = _quota(view, {"requests.cpu": "1", "count/pods": "10", "pods": "10"})
    plugin = ResourceQuotaPlugin(view)
    assert plugin.status_for(quota, [("", "pods")]) == {
        "hard": {"requests.cpu": "1", "count/pods": "10", "pods": "10"},
        "used": {"requests.cpu": "0", "count/pods": "1", "pods": "0"}}
    plugin.validate(attrs(_sized("new", "500m")))  # fits: the finished pod's 900m no longer counts
    assert plugin.status_for(quota, [("", "pods")])["used"] == {"requests.cpu": "500m", "count/pods": "2", "pods": "1"}


def test_quotas_on_cpu_require_every_container_to_state_it():
    view = FakeView()
    _quota(view, {"limits.cpu": "4", "requests.memory": "1Gi"})
    with pytest.raises(errors.Rejection) as refused:
        ResourceQuotaPlugin(view).validate(attrs(pod()))
    assert refused.value.message == 'pods "p" is forbidden: failed quota: q: must specify limits.cpu,requests.memory'


def test_object_counts_and_scopes():
    view = FakeView()
    _quota(view, {"count/configmaps": "1"})
    view.put("", "configmaps", {"metadata": {"name": "one", "namespace": "default"}})
    with pytest.raises(errors.Rejection):
        ResourceQuotaPlugin(view).validate(attrs({"metadata": {"name": "two", "namespace": "default"}},
                                                 resource="configmaps", kind="ConfigMap"))
    scoped = FakeView()
    _quota(scoped, {"pods": "0"}, scopes=["BestEffort"])
    plugin = ResourceQuotaPlugin(scoped)
    plugin.validate(attrs(_sized("sized", "1")))  # not BestEffort: the quota does not apply
    with pytest.raises(errors.Rejection):
        plugin.validate(attrs(pod("besteffort")))
