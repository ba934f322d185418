"""Events, Leases, PriorityClasses, PVCs, and the table's name rules and fallbacks."""

from __future__ import annotations

import pytest

from apiserver import kinds
from apiserver.strategy import Strategy
from tests.apiserver.kinds.writes import create, created, edited, messages, strategy, update


@pytest.mark.parametrize("group, resource, name, ok", [
    ("", "events", "web.17f3a2b9c:Pulled", True),
    ("", "events", "a/b", False),
    ("events.k8s.io", "events", "web.17f3a2b9c:Pulled", False),
    ("rbac.authorization.k8s.io", "roles", "system:controller:foo", True),
    ("rbac.authorization.k8s.io", "clusterroles", "..", False),
    ("", "serviceaccounts", "builder", True),
    ("", "serviceaccounts", "Builder", False),
    ("example.com", "widgets", "w-1", True),
], ids=["core events take any path segment", "but not a slash", "events.k8s.io names are subdomains",
        "RBAC names may hold colons", "but not '..'", "service accounts are subdomains", "without capitals",
        "unknown kinds get the generic subdomain rule"])
def test_name_rules_per_kind(group, resource, name, ok):
    s = kinds.strategy_for(group, resource, namespaced=True, has_status=False)
    causes = s.validate({"metadata": {"name": name, "namespace": "default"}})
    assert ("metadata.name" not in [c["field"] for c in causes]) is ok


def test_an_unknown_kind_gets_the_generic_strategy():
    s = kinds.strategy_for("example.com", "widgets", namespaced=True, has_status=True)
    assert type(s) is Strategy and s.tracks_generation


def test_an_unknown_subresource_is_a_lookup_error():
    with pytest.raises(LookupError):
        kinds.strategy_for("", "configmaps/resize", namespaced=True, has_status=False)


@pytest.mark.parametrize("resource", ["services", "namespaces", "persistentvolumeclaims", "nodes", "persistentvolumes"])
def test_kinds_with_status_but_without_generation(resource):
    assert not strategy("", resource, namespaced=resource not in ("namespaces", "nodes", "persistentvolumes")).tracks_generation


def core_event(**body) -> dict:
    return {"kind": "Event", "metadata": {"name": "web.1", "namespace": "default"}, "involvedObject": {"namespace": "default"},
            "reason": "Pulled", **body}


@pytest.mark.parametrize("body, expected", [
    ({}, []),
    ({"involvedObject": {"namespace": "other"}}, ['involvedObject.namespace: Invalid value: "other": does not match event.namespace']),
], ids=["a classic event is fine", "its namespace matches the object's"])
def test_core_event_validation(body, expected):
    assert messages(create(strategy("", "events", has_status=False), core_event(**body))) == expected


def test_a_core_event_with_event_time_needs_the_reporting_fields():
    causes = messages(create(strategy("", "events", has_status=False), core_event(eventTime="2026-01-01T00:00:00.000000Z")))
    required = [m for m in causes if m.endswith("Required value")]
    assert required == ["reportingController: Required value", "reportingInstance: Required value", "action: Required value"]


def v1_event(**body) -> dict:
    event = {"kind": "Event", "metadata": {"name": "web.1", "namespace": "default"}, "regarding": {"namespace": "default"},
             "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "example.com/ctl", "reportingInstance": "i-1",
             "action": "Pull", "reason": "Pulled", "type": "Normal"}
    event.update(body)
    return event


@pytest.mark.parametrize("body, expected", [
    ({}, []),
    ({"type": "Info"}, ['type: Invalid value: "": has invalid value: Info']),
    ({"deprecatedCount": 3}, ['count: Invalid value: "": needs to be unset']),
    ({"series": {"count": 1}}, ['series.count: Invalid value: "": should be at least 2', "series.lastObservedTime: Required value"]),
], ids=["a complete v1 event", "type is Normal or Warning", "deprecated fields stay unset", "a series counts at least two"])
def test_events_v1_validation(body, expected):
    assert messages(create(strategy("events.k8s.io", "events", has_status=False), v1_event(**body))) == expected


def test_an_events_v1_note_may_not_change():
    s = strategy("events.k8s.io", "events", has_status=False)
    old = created(s, v1_event(note="first"))
    new = edited(old)
    new["note"] = "second"
    assert messages(update(s, new, old)) == ['message: Invalid value: "second": field is immutable']


@pytest.mark.parametrize("spec, expected", [
    ({"leaseDurationSeconds": 15, "holderIdentity": "me"}, []),
    ({"leaseDurationSeconds": 0}, ["spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"]),
    ({"leaseTransitions": -1}, ["spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0"]),
    ({"preferredHolder": "me"}, ["spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined"]),
], ids=["a held lease", "a zero duration", "negative transitions", "a preferred holder without a strategy"])
def test_lease_validation(spec, expected):
    lease = {"kind": "Lease", "metadata": {"name": "l", "namespace": "default"}, "spec": spec}
    assert messages(create(strategy("coordination.k8s.io", "leases", has_status=False), lease)) == expected


def priority_classes():
    return strategy("scheduling.k8s.io", "priorityclasses", namespaced=False, has_status=False)


def test_a_priority_class_gets_value_zero_and_preempt_lower_priority():
    pc = created(priority_classes(), {"kind": "PriorityClass", "metadata": {"name": "batch"}})
    assert (pc["value"], pc["preemptionPolicy"]) == (0, "PreemptLowerPriority")


@pytest.mark.parametrize("name, value, expected", [
    ("system-node-critical", 2000001000, []),
    ("system-custom", 1, ["metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system "
                          "use only. error: system-custom is not a known system priority class"]),
    ("huge", 1000000001, ["value: Forbidden: maximum allowed value of a user defined priority is 1000000000"]),
], ids=["the built-in class", "an unknown system- name", "a user value above one billion"])
def test_priority_class_validation(name, value, expected):
    pc = {"kind": "PriorityClass", "metadata": {"name": name}, "value": value}
    assert messages(create(priority_classes(), pc)) == expected


def test_a_priority_class_value_may_not_change():
    s = priority_classes()
    old = created(s, {"kind": "PriorityClass", "metadata": {"name": "batch"}, "value": 10})
    new = edited(old)
    new["value"] = 11
    assert messages(update(s, new, old)) == ["value: Forbidden: may not be changed in an update."]


def claims():
    return strategy("", "persistentvolumeclaims")


def a_claim(**spec) -> dict:
    body = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, **spec}
    return {"kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "default"}, "spec": body}


def test_a_claim_gets_filesystem_mode_and_pending_phase():
    pvc = created(claims(), a_claim())
    assert (pvc["spec"]["volumeMode"], pvc["status"]) == ("Filesystem", {"phase": "Pending"})


@pytest.mark.parametrize("spec, expected", [
    ({"accessModes": []}, ["spec.accessModes: Required value: at least 1 access mode is required"]),
    ({"resources": {}}, ["spec.resources[storage]: Required value"]),
    ({"accessModes": ["ReadWriteOncePod", "ReadWriteOnce"]},
     ["spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"]),
], ids=["an access mode is required", "a storage request is required", "ReadWriteOncePod stands alone"])
def test_claim_validation(spec, expected):
    assert messages(create(claims(), a_claim(**spec))) == expected


def test_a_claim_spec_is_immutable_but_a_bound_claim_may_grow_and_volume_name_may_be_set_once():
    s = claims()
    old = created(s, a_claim())
    bound = edited(old)
    bound["spec"]["volumeName"] = "pv-1"
    assert update(s, bound, old) == []
    bound["status"] = {"phase": "Bound"}
    grown = edited(bound)
    grown["spec"]["resources"]["requests"]["storage"] = "2Gi"
    assert update(s, grown, bound) == []
    other_class = edited(bound)
    other_class["spec"]["accessModes"] = ["ReadWriteMany"]
    causes = update(s, other_class, bound)
    assert causes[0]["message"].startswith("Forbidden: spec is immutable after creation except resources.requests and "
                                           "volumeAttributesClassName for bound claims\n")
