"""The resource registry and feature gates: what is served, how rows look, how gates parse."""

from __future__ import annotations

import collections
import json

import pytest

from apiserver import features, registry, schemas


def _table() -> dict:
    with open(registry.DATA_FILE) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def reg() -> registry.Registry:
    return registry.Registry.builtin()


def _served(reg: registry.Registry) -> set[tuple[str, str, str]]:
    return {(r.group, r.version, r.resource) for r in reg.all()}


# -- the served set -----------------------------------------------------------------------
def test_every_table_entry_is_served_gated_or_excluded_with_a_reason(reg):
    entries = [(e["group"], e["version"], e["resource"]) for e in _table()["resources"]]
    decided = [(d.group, d.version, d.resource) for d in reg.decisions]
    assert sorted(decided) == sorted(entries)
    assert len(set(decided)) == len(decided)
    for d in reg.decisions:
        assert d.outcome in ("served", "gated", "excluded") and d.reason
        assert (reg.get(d.group, d.version, d.resource) is not None) == (d.outcome == "served")
    assert _served(reg) == {(d.group, d.version, d.resource) for d in reg.decisions if d.outcome == "served"}


def test_haru_default_gates_leave_nothing_gated(reg):
    assert [d for d in reg.decisions if d.outcome == "gated"] == []


def test_the_issue_list_is_served_in_the_expected_versions(reg):
    served = _served(reg)
    for row in [
        ("scheduling.k8s.io", "v1", "priorityclasses"),
        ("scheduling.k8s.io", "v1alpha2", "podgroups"),
        ("scheduling.k8s.io", "v1alpha2", "workloads"),
        ("resource.k8s.io", "v1", "deviceclasses"),
        ("resource.k8s.io", "v1", "resourceclaims"),
        ("resource.k8s.io", "v1", "resourceclaimtemplates"),
        ("resource.k8s.io", "v1", "resourceslices"),
        ("resource.k8s.io", "v1beta2", "devicetaintrules"),
        ("resource.k8s.io", "v1alpha3", "resourcepoolstatusrequests"),
        ("admissionregistration.k8s.io", "v1", "mutatingadmissionpolicies"),
        ("autoscaling", "v2", "horizontalpodautoscalers"),
        ("coordination.k8s.io", "v1", "leases"),
        ("", "v1", "pods"),
    ]:
        assert row in served, row
    # Versions haru cannot convert to are not served next to the preferred one.
    for row in [
        ("autoscaling", "v1", "horizontalpodautoscalers"),
        ("resource.k8s.io", "v1alpha3", "devicetaintrules"),
        ("resource.k8s.io", "v1beta2", "resourceclaims"),
        ("admissionregistration.k8s.io", "v1beta1", "mutatingadmissionpolicies"),
    ]:
        assert row not in served, row
    issue_groups = {"", "apps", "batch", "coordination.k8s.io", "events.k8s.io", "rbac.authorization.k8s.io",
                    "policy", "networking.k8s.io", "discovery.k8s.io", "storage.k8s.io", "scheduling.k8s.io",
                    "resource.k8s.io", "admissionregistration.k8s.io", "apiextensions.k8s.io",
                    "certificates.k8s.io", "autoscaling", "node.k8s.io", "flowcontrol.apiserver.k8s.io"}
    assert issue_groups <= set(reg.groups())


def test_one_version_per_resource(reg):
    counts = collections.Counter((r.group, r.resource) for r in reg.all())
    assert [k for k, n in counts.items() if n > 1] == []


def test_every_served_kind_has_its_1_36_schema(reg):
    for info in reg.all():
        assert info.schema is not None, info.resource
        gvks = info.schema.get("x-kubernetes-group-version-kind", [])
        assert {"group": info.group, "version": info.version, "kind": info.kind} in gvks, info.resource
        assert info.schema is schemas.for_kind(info.group, info.version, info.kind)


def test_short_names_name_one_resource_and_never_shadow_another(reg):
    owners = collections.defaultdict(set)
    for info in reg.all():
        for short in info.short_names:
            owners[short].add(info.resource)
    # `ev` is both core and events.k8s.io events, as upstream: one resource name, two groups.
    assert {s: o for s, o in owners.items() if len(o) > 1} == {}
    names = {r.resource for r in reg.all()} | {r.singular for r in reg.all()}
    assert set(owners) & names == set()


def test_groups_and_versions_come_in_discovery_order(reg):
    table_order = [g["group"] for g in _table()["groups"]]
    groups = reg.groups()
    assert groups[0] == ""
    assert groups == [g for g in table_order if g in groups]
    assert reg.served_versions("scheduling.k8s.io") == ["v1", "v1alpha2"]
    assert reg.served_versions("resource.k8s.io") == ["v1", "v1beta2", "v1alpha3"]
    assert reg.served_versions("autoscaling") == ["v2"]
    names = [r.resource for r in reg.resources("apps", "v1")]
    assert names == sorted(names)


def test_version_priority_sorts_like_kubernetes():
    versions = ["v1alpha1", "v2", "v1beta1", "foo", "v1", "v10alpha1", "v1beta2", "v11alpha2"]
    assert sorted(versions, key=registry.version_priority) == [
        "v2", "v1", "v1beta2", "v1beta1", "v11alpha2", "v10alpha1", "v1alpha1", "foo"]


# -- one row ------------------------------------------------------------------------------
def test_the_deployment_row(reg):
    d = reg.get("apps", "v1", "deployments")
    assert d is reg.by_kind("apps", "v1", "Deployment")
    assert (d.kind, d.singular, d.namespaced, d.short_names, d.categories) == (
        "Deployment", "deployment", True, ("deploy",), ("all",))
    assert d.verbs == ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
    assert set(d.subresources) == {"status", "scale"}
    scale = d.subresources["scale"]
    assert (scale.group, scale.version, scale.kind, scale.verbs) == ("autoscaling", "v1", "Scale",
                                                                     ("get", "patch", "update"))
    assert (d.list_kind, d.api_version, d.stored, d.builtin) == ("DeploymentList", "apps/v1", True, True)
    assert d.printer_columns and d.printer_columns[0]["name"] == "Name"


def test_pod_row_has_its_subresources_field_selectors_and_aliases(reg):
    pods = reg.get("", "v1", "pods")
    assert {"status", "binding", "eviction", "exec", "log", "resize", "ephemeralcontainers"} <= set(pods.subresources)
    assert pods.subresources["exec"].connect and not pods.subresources["status"].connect
    assert pods.subresources["eviction"].group == "policy"
    assert {"spec.nodeName", "status.phase", "spec.schedulerName"} <= set(pods.field_selectors)
    assert pods.field_selector_aliases == {"spec.host": "spec.nodeName"}
    slices = reg.get("resource.k8s.io", "v1", "resourceslices")
    assert {"spec.driver", "spec.nodeName"} <= set(slices.field_selectors)


def test_storage_keys_follow_the_convention(reg):
    pods, nodes = reg.get("", "v1", "pods"), reg.get("", "v1", "nodes")
    deploy = reg.get("apps", "v1", "deployments")
    assert pods.key_prefix == "/registry/core/pods/"
    assert pods.key("default", "p1") == "/registry/core/pods/default/p1"
    assert nodes.key(None, "n1") == "/registry/core/nodes/n1"
    assert deploy.key("ns", "web") == "/registry/apps/deployments/ns/web"
    assert deploy.list_prefix("ns") == "/registry/apps/deployments/ns/"
    assert deploy.list_prefix(None) == "/registry/apps/deployments/"
    with pytest.raises(ValueError):
        pods.key(None, "p1")


def test_virtual_kinds_are_not_stored(reg):
    virtual = {r.resource for r in reg.all() if not r.stored}
    assert virtual == {"bindings", "componentstatuses", "tokenreviews", "subjectaccessreviews",
                       "localsubjectaccessreviews", "selfsubjectaccessreviews", "selfsubjectrulesreviews",
                       "selfsubjectreviews"}
    for resource in virtual - {"componentstatuses"}:
        assert [r.verbs for r in reg.all() if r.resource == resource] == [("create",)]
    assert reg.get("", "v1", "bindings").storage_version_hash is None


def test_storage_version_hash_matches_upstream(reg):
    # Values a real server publishes (kubernetes api/discovery/api__v1.json).
    assert reg.get("", "v1", "pods").storage_version_hash == "xPOwRZ+Yhw8="
    assert reg.get("", "v1", "configmaps").storage_version_hash == "qFsyl6wFWjQ="


def test_deprecated_versions_carry_the_upstream_warning(reg):
    warnings = {r.resource: r.deprecation_warning for r in reg.all() if r.deprecation_warning}
    assert warnings == {"leasecandidates": "coordination.k8s.io/v1beta1 LeaseCandidate is deprecated in v1.36+, "
                                           "unavailable in v1.39+",
                        # k8s.io/api marks ComponentStatus deprecated in 1.19, with no removal planned.
                        "componentstatuses": "v1 ComponentStatus is deprecated in v1.19+"}


def test_add_and_remove_bump_the_generation():
    reg = registry.Registry.builtin()
    start = reg.generation
    widget = registry.ResourceInfo(group="example.com", version="v1", resource="widgets", kind="Widget",
                                   singular="widget", namespaced=True, verbs=("get", "list"), builtin=False)
    reg.add(widget)
    assert reg.generation == start + 1
    assert reg.by_kind("example.com", "v1", "Widget") is widget
    assert reg.groups()[-1] == "example.com"
    assert widget.key_prefix == "/registry/example.com/widgets/"
    assert reg.remove("example.com", "v1", "widgets") is widget
    assert reg.generation == start + 2
    assert reg.remove("example.com", "v1", "widgets") is None
    assert reg.generation == start + 2
    assert "example.com" not in reg.groups() and reg.by_kind("example.com", "v1", "Widget") is None


# -- feature gates ------------------------------------------------------------------------
def test_alpha_and_beta_gates_default_on_and_ga_keeps_upstream():
    gates = features.FeatureGates()
    for name, spec in features.KNOWN.items():
        on_here = spec.stage in (features.ALPHA, features.BETA)
        assert gates.enabled(name) == (True if on_here else spec.upstream_default), name
    assert gates.enabled("ShardedListAndWatch") and gates.enabled("GenericWorkload")


def test_gates_switch_off_their_resources_and_subresources():
    gates = features.FeatureGates.parse("GenericWorkload=false, DRAResourcePoolStatus=false")
    assert not gates.enabled("GenericWorkload") and gates.enabled("ShardedListAndWatch")
    reg = registry.Registry.builtin(gates)
    gated = {(d.resource, d.reason) for d in reg.decisions if d.outcome == "gated"}
    assert gated == {("podgroups", "feature gate GenericWorkload is off"),
                     ("workloads", "feature gate GenericWorkload is off"),
                     ("resourcepoolstatusrequests", "feature gate DRAResourcePoolStatus is off")}
    assert reg.get("scheduling.k8s.io", "v1alpha2", "podgroups") is None
    assert reg.served_versions("scheduling.k8s.io") == ["v1"]
    assert reg.served_versions("resource.k8s.io") == ["v1", "v1beta2"]


def test_all_alpha_and_all_beta_switch_whole_stages_and_named_gates_win():
    gates = features.FeatureGates.parse("AllAlpha=false,AllBeta=false,GenericWorkload=true")
    assert gates.enabled("GenericWorkload")
    assert not gates.enabled("ShardedListAndWatch") and not gates.enabled("DRADeviceTaints")
    assert gates.enabled("DynamicResourceAllocation") and gates.enabled("MutatingAdmissionPolicy")


@pytest.mark.parametrize("flag, gate, value", [
    ("SchedulerAsyncPreemption=false", "SchedulerAsyncPreemption", False),
    ("KubeletPSI=false", "KubeletPSI", False),
    ("ContextualLogging=false", "ContextualLogging", False),
    ("WatchListClient=false", "WatchListClient", False),
    ("APIServerIdentity=false", "APIServerIdentity", False),
], ids=["a scheduler gate", "a kubelet gate", "a component-base logging gate", "a client-go gate",
        "a generic apiserver gate"])
def test_every_component_s_1_36_gate_is_accepted(flag, gate, value):
    # kube-apiserver registers every Kubernetes gate in one registry, so it accepts these too.
    assert features.FeatureGates.parse(flag).enabled(gate) is value


@pytest.mark.parametrize("gate, stage, upstream_default, locked", [
    ("SchedulerAsyncPreemption", features.BETA, True, False),
    ("SchedulerAsyncAPICalls", features.BETA, False, False),
    ("InPlacePodVerticalScaling", features.GA, True, True),
    ("DRAConsumableCapacity", features.BETA, True, False),
    ("AllowDNSOnlyNodeCSR", features.DEPRECATED, False, False),
    ("TopologyAwareWorkloadScheduling", features.ALPHA, False, False),
], ids=["beta on upstream", "beta off upstream", "GA locked", "beta since 1.36", "deprecated and off",
        "alpha since 1.36"])
def test_registered_gates_carry_their_1_36_stage_and_default(gate, stage, upstream_default, locked):
    assert features.REGISTERED[gate] == features.GateSpec(stage, upstream_default, locked)


def test_haru_turns_on_every_alpha_and_beta_gate_and_keeps_the_others_upstream():
    gates = features.FeatureGates()
    assert len(features.REGISTERED) > 200 and set(features.KNOWN) <= set(features.REGISTERED)
    for name, spec in features.REGISTERED.items():
        assert gates.enabled(name) == (spec.stage in (features.ALPHA, features.BETA) or spec.upstream_default), name
    assert not gates.enabled("AllowDNSOnlyNodeCSR") and gates.enabled("SchedulerAsyncAPICalls")


def test_locked_gates_outside_haru_s_own_are_refused_too():
    with pytest.raises(ValueError) as err:
        features.FeatureGates.parse("NodeSwap=false")
    assert str(err.value) == "cannot set feature gate NodeSwap to false, feature is locked to true"


@pytest.mark.parametrize("flag, message", [
    ("NoSuchGate=true", "unrecognized feature gate: NoSuchGate"),
    ("GenericWorkload", "missing bool value for GenericWorkload"),
    ("GenericWorkload=maybe",
     'invalid value of GenericWorkload=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax'),
    ("DynamicResourceAllocation=false",
     "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true"),
])
def test_bad_feature_gate_flags_fail_with_upstream_text(flag, message):
    with pytest.raises(ValueError) as err:
        features.FeatureGates.parse(flag)
    assert str(err.value) == message


def test_gate_values_accept_go_booleans_and_print_back():
    gates = features.FeatureGates.parse("GenericWorkload=F,ShardedListAndWatch=1,,")
    assert not gates.enabled("GenericWorkload") and gates.enabled("ShardedListAndWatch")
    assert "GenericWorkload=false" in str(gates).split(",")
    with pytest.raises(ValueError, match="not registered"):
        gates.enabled("Nope")
