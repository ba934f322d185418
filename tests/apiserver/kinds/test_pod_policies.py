"""The 1.36 pod policies over HTTP: gitRepo volumes refused, AppArmor only as the field.

Raw requests against an in-process server (the `api` fixture): the status, the Status causes
(reason, field, message), the Warning headers, and what was stored. The same rules through
kubectl v1.36.3 are in tests/e2e/test_pod_policies.py.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apiserver import features
from apiserver.kinds import podspec_validation, volume_policy
from tests.conftest import InProcess

PODS = "/api/v1/namespaces/default/pods"
MERGE = {"Content-Type": "application/merge-patch+json"}
AA = "container.apparmor.security.beta.kubernetes.io/"
DEPRECATED = 'metadata.annotations[{}]: deprecated since v1.30; use the "appArmorProfile" field instead'
GIT_REPO = {"repository": "https://example.com/site.git", "revision": "main"}


def a_pod(name: str = "web", annotations: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": [{"name": "app", "image": "nginx:1.27"}]}
    body.update(spec)
    meta: dict[str, Any] = {"name": name}
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body}


def template(annotations: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": [{"name": "app", "image": "nginx:1.27"}]}
    body.update(spec)
    meta: dict[str, Any] = {"labels": {"app": "web"}}
    if annotations is not None:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": body}


def workload(kind: str, tmpl: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(collection path, object) for a workload of `kind` around the pod template `tmpl`."""
    selector = {"matchLabels": {"app": "web"}}
    if kind == "Job":
        tmpl["spec"]["restartPolicy"] = "Never"
        return "/apis/batch/v1/namespaces/default/jobs", {
            "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "web"}, "spec": {"template": tmpl}}
    if kind == "CronJob":
        tmpl["spec"]["restartPolicy"] = "Never"
        return "/apis/batch/v1/namespaces/default/cronjobs", {
            "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "web"},
            "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": tmpl}}}}
    spec: dict[str, Any] = {"selector": selector, "template": tmpl}
    if kind == "StatefulSet":
        spec["serviceName"] = "web"
    return f"/apis/apps/v1/namespaces/default/{kind.lower()}s", {
        "apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "web"}, "spec": spec}


def causes(answer: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c["reason"], c["field"], c["message"]) for c in answer["details"]["causes"]]


def warnings(headers: Any) -> list[str]:
    """The Warning header values as kubectl prints them (299 - "text", quotes unescaped)."""
    out = []
    for value in headers.getall("Warning", []):
        assert value.startswith('299 - "') and value.endswith('"'), value
        out.append(value[len('299 - "'):-1].replace('\\"', '"'))
    return out


async def put_in_store(api: InProcess, resource: str, group: str, version: str, obj: dict[str, Any]) -> None:
    """Write `obj` over the stored object, as data written before this rule existed would be."""
    info = api.running.server.registry.get(group, version, resource)
    key = info.key("default", obj["metadata"]["name"])
    await api.store.update(key, obj)


# -- gitRepo volumes ----------------------------------------------------------------------------

FORBIDDEN = "Forbidden: " + volume_policy.GIT_REPO_DISABLED


async def test_a_pod_gets_one_forbidden_cause_per_git_repo_volume_and_nothing_is_stored(api: InProcess) -> None:
    pod = a_pod(volumes=[{"name": "cache", "emptyDir": {}}, {"name": "site", "gitRepo": GIT_REPO},
                         {"name": "docs", "gitRepo": {"repository": "https://example.com/docs.git"}}])
    before = api.store.revision
    status, answer, _ = await api.request("POST", PODS, json=pod)
    assert (status, answer["reason"]) == (422, "Invalid")
    assert causes(answer) == [("FieldValueForbidden", "spec.volumes[1].gitRepo", FORBIDDEN),
                              ("FieldValueForbidden", "spec.volumes[2].gitRepo", FORBIDDEN)]
    assert answer["message"].startswith('Pod "web" is invalid: [spec.volumes[1].gitRepo: Forbidden: gitRepo volumes '
                                        "are disabled")
    assert "emptyDir volume populated by an init container that clones the repository" in answer["message"]
    assert api.store.revision == before


WORKLOAD_TEMPLATES = [
    ("Deployment", "spec.template.spec.volumes[0].gitRepo"),
    ("ReplicaSet", "spec.template.spec.volumes[0].gitRepo"),
    ("StatefulSet", "spec.template.spec.volumes[0].gitRepo"),
    ("DaemonSet", "spec.template.spec.volumes[0].gitRepo"),
    ("Job", "spec.template.spec.volumes[0].gitRepo"),
    ("CronJob", "spec.jobTemplate.spec.template.spec.volumes[0].gitRepo"),
]


async def test_every_workload_template_with_a_git_repo_volume_is_refused(api: InProcess) -> None:
    for kind, field in WORKLOAD_TEMPLATES:
        path, obj = workload(kind, template(volumes=[{"name": "site", "gitRepo": GIT_REPO}]))
        status, answer, _ = await api.request("POST", path, json=obj)
        assert (status, answer["reason"]) == (422, "Invalid"), (kind, answer)
        assert causes(answer) == [("FieldValueForbidden", field, FORBIDDEN)], kind
        ok_path, ok = workload(kind, template(volumes=[{"name": "site", "emptyDir": {}}]))
        status, answer, _ = await api.request("POST", ok_path, json=ok)
        assert status == 201, (kind, answer)


async def test_a_stored_pod_with_a_git_repo_volume_stays_updatable_and_deletable(api: InProcess) -> None:
    status, pod, _ = await api.request("POST", PODS, json=a_pod(volumes=[{"name": "site", "emptyDir": {}}]))
    assert status == 201
    # As written by a server from before 1.36 (or by any path that skipped this rule).
    legacy = copy.deepcopy(pod)
    legacy["spec"]["volumes"] = [{"name": "site", "gitRepo": GIT_REPO}]
    await put_in_store(api, "pods", "", "v1", legacy)
    patch = {"metadata": {"labels": {"tier": "web"}, "finalizers": ["example.com/keep"]}}
    status, answer, _ = await api.request("PATCH", f"{PODS}/web", json=patch, headers=MERGE)
    assert status == 200, answer
    assert answer["spec"]["volumes"] == [{"name": "site", "gitRepo": GIT_REPO}]
    assert answer["metadata"]["labels"] == {"tier": "web"}
    status, answer, _ = await api.request("PATCH", f"{PODS}/web", json={"metadata": {"finalizers": None}},
                                          headers=MERGE)
    assert status == 200, answer
    status, _, _ = await api.request("DELETE", f"{PODS}/web")
    assert status == 200
    status, _, _ = await api.request("GET", f"{PODS}/web")
    assert status == 404


def test_a_template_update_lets_through_only_git_repo_volumes_the_stored_template_had() -> None:
    def refused(new: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
        return [c["field"] for c in podspec_validation.template(new, "spec.template", old)
                if c["field"].endswith(".gitRepo")]

    old = template(volumes=[{"name": "site", "gitRepo": GIT_REPO}])
    new = template(volumes=[{"name": "site", "gitRepo": GIT_REPO}, {"name": "docs", "gitRepo": GIT_REPO}])
    assert refused(new, old) == ["spec.template.spec.volumes[1].gitRepo"]
    assert refused(new) == ["spec.template.spec.volumes[0].gitRepo", "spec.template.spec.volumes[1].gitRepo"]
    assert refused(template(volumes=[{"name": "site-2", "gitRepo": GIT_REPO}]), old) == [
        "spec.template.spec.volumes[0].gitRepo"]


def test_the_git_repo_gate_is_locked_off() -> None:
    assert not features.FeatureGates().enabled("GitRepoVolumeDriver")
    assert not features.FeatureGates.parse("GitRepoVolumeDriver=false").enabled("GitRepoVolumeDriver")
    assert not features.FeatureGates.parse("AllAlpha=true,AllBeta=true").enabled("GitRepoVolumeDriver")
    with pytest.raises(ValueError) as err:
        features.FeatureGates.parse("GitRepoVolumeDriver=true")
    assert str(err.value) == "cannot set feature gate GitRepoVolumeDriver to true, feature is locked to false"


def test_the_manifest_admission_gate_is_alpha_and_on_here_unless_switched_off() -> None:
    spec = features.KNOWN["ManifestBasedAdmissionControlConfig"]
    assert (spec.stage, spec.upstream_default, spec.locked) == (features.ALPHA, False, False)
    assert features.FeatureGates().enabled("ManifestBasedAdmissionControlConfig")
    assert not features.FeatureGates.parse("AllAlpha=false").enabled("ManifestBasedAdmissionControlConfig")


# -- AppArmor: annotation → field on pod create ------------------------------------------------

async def test_an_annotation_without_a_field_becomes_the_container_field_with_a_warning(api: InProcess) -> None:
    pod = a_pod(annotations={AA + "app": "localhost/k8s-nginx", AA + "init": "runtime/default"},
                initContainers=[{"name": "init", "image": "busybox:1.36"}])
    status, answer, headers = await api.request("POST", PODS, json=pod)
    assert status == 201, answer
    assert answer["spec"]["initContainers"][0]["securityContext"] == {"appArmorProfile": {"type": "RuntimeDefault"}}
    assert answer["spec"]["containers"][0]["securityContext"] == {
        "appArmorProfile": {"type": "Localhost", "localhostProfile": "k8s-nginx"}}
    # The annotations stay as sent; nothing is written back from fields.
    assert answer["metadata"]["annotations"] == {AA + "app": "localhost/k8s-nginx", AA + "init": "runtime/default"}
    assert warnings(headers) == [DEPRECATED.format(AA + "init"), DEPRECATED.format(AA + "app")]
    status, stored, _ = await api.request("GET", f"{PODS}/web")
    assert stored["spec"]["containers"][0]["securityContext"]["appArmorProfile"]["localhostProfile"] == "k8s-nginx"


async def test_an_annotation_equal_to_the_pod_profile_is_not_copied_and_not_warned(api: InProcess) -> None:
    pod = a_pod(annotations={AA + "app": "runtime/default"},
                securityContext={"appArmorProfile": {"type": "RuntimeDefault"}})
    status, answer, headers = await api.request("POST", PODS, json=pod)
    assert status == 201, answer
    assert "securityContext" not in answer["spec"]["containers"][0]
    assert warnings(headers) == []


async def test_an_annotation_that_means_no_profile_is_warned_about_but_not_copied(api: InProcess) -> None:
    status, answer, headers = await api.request("POST", PODS, json=a_pod(annotations={AA + "app": "localhost/"}))
    assert status == 201, answer
    assert "securityContext" not in answer["spec"]["containers"][0]
    assert warnings(headers) == [DEPRECATED.format(AA + "app")]


async def test_a_container_field_wins_and_must_agree_with_its_annotation(api: InProcess) -> None:
    agree = a_pod(annotations={AA + "app": "unconfined"},
                  containers=[{"name": "app", "image": "nginx", "securityContext": {
                      "appArmorProfile": {"type": "Unconfined"}}}])
    status, answer, headers = await api.request("POST", PODS, json=agree)
    assert status == 201 and warnings(headers) == []
    for name, annotation, profile, expected in [
        ("kind", "runtime/default", {"type": "Unconfined"},
         ("FieldValueForbidden", "spec.containers[0].securityContext.appArmorProfile.type",
          "Forbidden: apparmor type in annotation and field must match")),
        ("profile", "localhost/other", {"type": "Localhost", "localhostProfile": "mine"},
         ("FieldValueForbidden", "spec.containers[0].securityContext.appArmorProfile.localhostProfile",
          "Forbidden: apparmor profile in annotation and field must match")),
    ]:
        pod = a_pod(name, annotations={AA + "app": annotation},
                    containers=[{"name": "app", "image": "nginx", "securityContext": {"appArmorProfile": profile}}])
        status, answer, _ = await api.request("POST", PODS, json=pod)
        assert (status, causes(answer)) == (422, [expected]), name


async def test_updates_neither_copy_annotations_nor_compare_them_with_fields(api: InProcess) -> None:
    pod = a_pod(containers=[{"name": "app", "image": "nginx", "securityContext": {
        "appArmorProfile": {"type": "Localhost", "localhostProfile": "a"}}}],
        initContainers=[{"name": "init", "image": "busybox"}])
    status, _, _ = await api.request("POST", PODS, json=pod)
    assert status == 201
    patch = {"metadata": {"annotations": {AA + "app": "localhost/b", AA + "init": "unconfined"}}}
    status, answer, headers = await api.request("PATCH", f"{PODS}/web", json=patch, headers=MERGE)
    assert status == 200, answer
    assert answer["spec"]["containers"][0]["securityContext"]["appArmorProfile"]["localhostProfile"] == "a"
    assert "securityContext" not in answer["spec"]["initContainers"][0]
    assert warnings(headers) == []


async def test_windows_pods_skip_the_sync_and_may_not_set_a_profile(api: InProcess) -> None:
    windows = a_pod(annotations={AA + "app": "runtime/default"}, os={"name": "windows"})
    status, answer, headers = await api.request("POST", PODS, json=windows)
    assert status == 201, answer
    assert "securityContext" not in answer["spec"]["containers"][0] and warnings(headers) == []
    profiled = a_pod("win2", os={"name": "windows"}, securityContext={"appArmorProfile": {"type": "RuntimeDefault"}},
                     containers=[{"name": "app", "image": "nginx", "securityContext": {
                         "appArmorProfile": {"type": "Unconfined"}}}])
    status, answer, _ = await api.request("POST", PODS, json=profiled)
    assert (status, causes(answer)) == (422, [
        ("FieldValueForbidden", "spec.securityContext.appArmorProfile", "Forbidden: cannot be set for a windows pod"),
        ("FieldValueForbidden", "spec.containers[0].securityContext.appArmorProfile",
         "Forbidden: cannot be set for a windows pod"),
    ])


# -- AppArmor: the field and the annotations, validated ------------------------------------------

# (case, profile, [(reason, field under appArmorProfile, message)])
FIELD_CASES: list[tuple[str, dict[str, Any], list[tuple[str, str, str]]]] = [
    ("localhost without profile", {"type": "Localhost"}, [
        ("FieldValueRequired", ".localhostProfile", "Required value: must be set when AppArmor type is Localhost")]),
    ("localhost with empty profile", {"type": "Localhost", "localhostProfile": ""}, [
        ("FieldValueRequired", ".localhostProfile", "Required value: must be set when AppArmor type is Localhost")]),
    ("padded profile", {"type": "Localhost", "localhostProfile": " prof"}, [
        ("FieldValueInvalid", ".localhostProfile", 'Invalid value: " prof": must not be padded with whitespace')]),
    ("profile too long", {"type": "Localhost", "localhostProfile": "p" * 4096}, [
        ("FieldValueTooLong", ".localhostProfile", "Too long: must have at most 4095 bytes")]),
    ("runtime default with profile", {"type": "RuntimeDefault", "localhostProfile": "prof"}, [
        ("FieldValueInvalid", ".localhostProfile",
         'Invalid value: "prof": can only be set when AppArmor type is Localhost')]),
    ("unconfined with profile", {"type": "Unconfined", "localhostProfile": "prof"}, [
        ("FieldValueInvalid", ".localhostProfile",
         'Invalid value: "prof": can only be set when AppArmor type is Localhost')]),
    ("unknown type", {"type": "Enforce"}, [
        ("FieldValueNotSupported", ".type",
         'Unsupported value: "Enforce": supported values: "Localhost", "RuntimeDefault", "Unconfined"')]),
]


@pytest.mark.parametrize("level", ["pod", "container", "template"])
async def test_the_field_is_validated_wherever_a_security_context_is(api: InProcess, level: str) -> None:
    for case, profile, expected in FIELD_CASES:
        context = {"appArmorProfile": profile}
        if level == "pod":
            path, obj, prefix = PODS, a_pod(securityContext=context), "spec.securityContext.appArmorProfile"
        elif level == "container":
            path, obj = PODS, a_pod(initContainers=[{"name": "init", "image": "busybox", "securityContext": context}])
            prefix = "spec.initContainers[0].securityContext.appArmorProfile"
        else:
            tmpl = template(containers=[{"name": "app", "image": "nginx", "securityContext": context}])
            path, obj = workload("Deployment", tmpl)
            prefix = "spec.template.spec.containers[0].securityContext.appArmorProfile"
        before = api.store.revision
        status, answer, _ = await api.request("POST", path, json=obj)
        assert status == 422, (case, answer)
        assert causes(answer) == [(reason, prefix + suffix, message) for reason, suffix, message in expected], case
        assert api.store.revision == before, case


async def test_annotations_must_name_a_container_and_a_profile(api: InProcess) -> None:
    pod = a_pod(annotations={AA + "ghost": "runtime/default", AA + "app": "enforce"})
    status, answer, headers = await api.request("POST", PODS, json=pod)
    assert (status, causes(answer)) == (422, [
        ("FieldValueInvalid", f"metadata.annotations[{AA}app]",
         'Invalid value: "enforce": invalid AppArmor profile name: "enforce"'),
        ("FieldValueInvalid", f"metadata.annotations[{AA}ghost]", 'Invalid value: "ghost": container not found'),
    ])
    path, deploy = workload("Deployment", template(annotations={AA + "ghost": "unconfined"}))
    status, answer, _ = await api.request("POST", path, json=deploy)
    assert (status, causes(answer)) == (422, [
        ("FieldValueInvalid", f"spec.template.annotations[{AA}ghost]", 'Invalid value: "ghost": container not found'),
    ])


async def test_a_template_keeps_its_annotation_and_gets_no_field(api: InProcess) -> None:
    path, deploy = workload("Deployment", template(annotations={AA + "app": "runtime/default"}))
    status, answer, _ = await api.request("POST", path, json=deploy)
    assert status == 201, answer
    tmpl = answer["spec"]["template"]
    assert tmpl["metadata"]["annotations"] == {AA + "app": "runtime/default"}
    assert "securityContext" not in tmpl["spec"]["containers"][0]
