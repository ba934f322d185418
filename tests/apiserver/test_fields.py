"""Field selectors: grammar, each kind's accepted labels and wording, and how fields are read."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from apiserver import fields

DATA = Path(__file__).resolve().parents[2] / "apiserver" / "data" / "resources-1.36.json"


@functools.cache
def resource_row(group: str, resource: str) -> dict:
    rows = json.loads(DATA.read_text())["resources"]
    return next(r for r in rows if r["group"] == group and r["resource"] == resource)


def parse(selector: str, group: str, resource: str) -> fields.FieldSelector:
    return fields.parse_for_resource(selector, resource_row(group, resource))


GRAMMAR = [
    pytest.param("a=b", [("a", "=", "b")], "a=b", id="equals"),
    pytest.param("a==b", [("a", "=", "b")], "a=b", id="double equals is reported as equals"),
    pytest.param("a!=b", [("a", "!=", "b")], "a!=b", id="not equals"),
    pytest.param("b=2,a=1", [("a", "=", "1"), ("b", "=", "2")], "a=1,b=2", id="terms are sorted"),
    pytest.param("a=1,,b=2", [("a", "=", "1"), ("b", "=", "2")], "a=1,b=2", id="empty terms are skipped"),
    pytest.param("a=", [("a", "=", "")], "a=", id="an empty value"),
    pytest.param(r"a=x\,y\=z\\w", [("a", "=", "x,y=z\\w")], r"a=x\,y\=z\\w", id="escaped comma, equals and backslash"),
    pytest.param("", [], "", id="an empty selector"),
]


@pytest.mark.parametrize("text, requirements, canonical", GRAMMAR)
def test_the_grammar_splits_escapes_and_sorts_terms(text: str, requirements: list, canonical: str) -> None:
    sel = fields.parse(text)
    assert [tuple(r) for r in sel.requirements] == requirements
    assert str(sel) == canonical


GRAMMAR_ERRORS = [
    pytest.param("a", "invalid selector: 'a'; can't understand 'a'", id="a term without an operator"),
    pytest.param("a=1,b", "invalid selector: 'a=1,b'; can't understand 'b'", id="an unescaped comma inside a value"),
    pytest.param("a=b=c", "invalid field selector: unescaped character in value: 61", id="an unescaped equals in a value"),
    pytest.param(r"a=\x", r"invalid field selector: invalid escape sequence: \x", id="an unknown escape"),
    pytest.param("a=b\\", "invalid field selector: invalid escape sequence: \\", id="a trailing backslash"),
]


@pytest.mark.parametrize("text, message", GRAMMAR_ERRORS)
def test_grammar_errors_use_the_upstream_text(text: str, message: str) -> None:
    with pytest.raises(fields.SelectorError) as err:
        fields.parse(text)
    assert str(err.value) == message


ACCEPTED = [
    pytest.param("", "pods", "spec.nodeName=n1,status.phase!=Running,spec.hostNetwork=true,status.podIPs=1.2.3.4",
                 "spec.hostNetwork=true,spec.nodeName=n1,status.phase!=Running,status.podIPs=1.2.3.4", id="pods accept their own fields"),
    pytest.param("", "pods", "spec.host=n1", "spec.nodeName=n1", id="pods map the legacy spec.host to spec.nodeName"),
    pytest.param("", "events", "involvedObject.kind=Pod,reason=Failed,source=kubelet,reportingComponent=x,type=Warning",
                 "involvedObject.kind=Pod,reason=Failed,reportingComponent=x,source=kubelet,type=Warning", id="core events accept involvedObject fields"),
    pytest.param("events.k8s.io", "events", "regarding.name=p,reportingController=c",
                 "involvedObject.name=p,reportingComponent=c", id="events.k8s.io names map to the core fields"),
    pytest.param("", "secrets", "type=Opaque,metadata.namespace=default", "metadata.namespace=default,type=Opaque", id="secrets accept type"),
    pytest.param("", "nodes", "spec.unschedulable=true,metadata.name=n", "metadata.name=n,spec.unschedulable=true", id="nodes accept spec.unschedulable"),
    pytest.param("", "namespaces", "status.phase=Active", "status.phase=Active", id="namespaces accept status.phase"),
    pytest.param("resource.k8s.io", "resourceslices", "spec.nodeName=n,spec.driver=gpu.example.com",
                 "spec.driver=gpu.example.com,spec.nodeName=n", id="resource slices accept node and driver"),
    pytest.param("", "configmaps", "metadata.name=a,metadata.namespace=b", "metadata.name=a,metadata.namespace=b", id="the default accepts name and namespace"),
    pytest.param("storage.k8s.io", "storageclasses", "metadata.namespace=x", "metadata.namespace=x",
                 id="the default accepts metadata.namespace even on cluster-scoped kinds"),
]


@pytest.mark.parametrize("group, resource, text, canonical", ACCEPTED)
def test_each_kind_accepts_its_real_labels(group: str, resource: str, text: str, canonical: str) -> None:
    assert str(parse(text, group, resource)) == canonical


REJECTED = [
    pytest.param("", "pods", "spec.foo=x", "field label not supported: spec.foo", id="pods reject an unknown field"),
    pytest.param("", "events", "regarding.kind=Pod", "field label not supported: regarding.kind", id="core events reject events.k8s.io names"),
    pytest.param("events.k8s.io", "events", "involvedObject.kind=Pod", "field label not supported: involvedObject.kind",
                 id="events.k8s.io rejects core names"),
    pytest.param("", "secrets", "data=x", "field label not supported: data", id="secrets reject data"),
    pytest.param("", "nodes", "metadata.namespace=x", "field label not supported: metadata.namespace", id="nodes reject metadata.namespace"),
    pytest.param("", "namespaces", "metadata.namespace=x", "field label not supported: metadata.namespace",
                 id="namespaces reject metadata.namespace"),
    pytest.param("resource.k8s.io", "resourceslices", "metadata.namespace=x", "field label not supported: metadata.namespace",
                 id="resource slices reject metadata.namespace"),
    pytest.param("", "configmaps", "data.x=1", '"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"',
                 id="the default conversion has its own wording"),
    pytest.param("apps", "deployments", "status.replicas=1",
                 '"status.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"', id="deployments use the default"),
    pytest.param("", "pods", "zzz=1,aaa=2", "field label not supported: aaa", id="the first unknown label in sorted order is reported"),
]


@pytest.mark.parametrize("group, resource, text, message", REJECTED)
def test_each_kind_rejects_other_labels_with_its_wording(group: str, resource: str, text: str, message: str) -> None:
    with pytest.raises(fields.SelectorError) as err:
        parse(text, group, resource)
    assert str(err.value) == message


POD = {
    "metadata": {"name": "p", "namespace": "default"},
    "spec": {"nodeName": "n1", "restartPolicy": "Always", "schedulerName": "default-scheduler", "serviceAccountName": "sa"},
    "status": {"phase": "Running", "podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}], "nominatedNodeName": ""},
}
CORE_EVENT = {
    "apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "default"},
    "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default", "uid": "u1", "fieldPath": "spec.containers{c}"},
    "reason": "Pulled", "type": "Normal", "reportingComponent": "kubelet", "source": {},
}
EVENTS_V1 = {
    "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e", "namespace": "default"},
    "regarding": {"kind": "Pod", "name": "p"}, "reason": "Scheduled", "type": "Normal",
    "reportingController": "default-scheduler", "deprecatedSource": {"component": "scheduler"},
}

MATCHING = [
    pytest.param("", "pods", POD, "spec.nodeName=n1,status.phase=Running", True, id="a pod on its node matches"),
    pytest.param("", "pods", POD, "spec.hostNetwork=false", True, id="hostNetwork reads false when unset"),
    pytest.param("", "pods", POD, "status.podIP=10.0.0.1", True, id="podIP reads the first pod IP"),
    pytest.param("", "pods", POD, "status.podIPs=10.0.0.1", False, id="podIPs is accepted but never set, as upstream"),
    pytest.param("", "pods", POD, "spec.host=n2", False, id="spec.host filters on nodeName"),
    pytest.param("", "pods", POD, "status.nominatedNodeName=", True, id="an empty value matches an unset field"),
    pytest.param("", "pods", POD, "metadata.namespace!=kube-system", True, id="not-equals on the namespace"),
    pytest.param("", "events", CORE_EVENT, "involvedObject.uid=u1,source=kubelet,reportingComponent=kubelet", True,
                 id="core event source falls back to the reporting component"),
    pytest.param("events.k8s.io", "events", EVENTS_V1, "regarding.kind=Pod,reportingController=default-scheduler,source=scheduler", True,
                 id="events.k8s.io objects are read through regarding and deprecatedSource"),
    pytest.param("", "events", EVENTS_V1, "involvedObject.name=p", True, id="the core API reads an events.k8s.io object too"),
    pytest.param("", "nodes", {"metadata": {"name": "n"}, "spec": {}}, "spec.unschedulable=false", True, id="unschedulable reads false when unset"),
    pytest.param("batch", "jobs", {"metadata": {"name": "j"}, "status": {"succeeded": 3}}, "status.successful=3", True,
                 id="jobs filter status.successful on succeeded"),
    pytest.param("", "replicationcontrollers", {"metadata": {"name": "r"}}, "status.replicas=0", True, id="replicas reads 0 when unset"),
    pytest.param("storage.k8s.io", "storageclasses", {"metadata": {"name": "s"}}, "metadata.namespace=x", False,
                 id="a non-empty namespace matches nothing on a cluster-scoped kind"),
    pytest.param("storage.k8s.io", "storageclasses", {"metadata": {"name": "s"}}, "metadata.namespace=", True,
                 id="an empty namespace matches everything on a cluster-scoped kind"),
    pytest.param("", "secrets", {"metadata": {"name": "s"}, "type": "kubernetes.io/tls"}, r"type=kubernetes.io/tls", True, id="secret type"),
]


@pytest.mark.parametrize("group, resource, obj, text, expected", MATCHING)
def test_selectors_read_fields_as_the_registries_do(group: str, resource: str, obj: dict, text: str, expected: bool) -> None:
    assert parse(text, group, resource).matches(obj) is expected


def test_field_values_are_strings_with_go_formatting() -> None:
    assert fields.value({"spec": {"hostNetwork": True}}, "spec.hostNetwork") == "true"
    assert fields.value({"spec": {"replicas": 3}}, "spec.replicas") == "3"
    assert fields.value({}, "spec.missing.deep") == ""


def test_exact_match_is_exposed_for_indexes() -> None:
    sel = parse("spec.nodeName=n1,status.phase!=Failed", "", "pods")
    assert sel.requires_exact_match("spec.nodeName") == "n1"
    assert sel.requires_exact_match("status.phase") is None
    assert fields.parse("").empty
