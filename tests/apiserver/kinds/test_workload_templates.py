"""Pod templates inside workloads and PodTemplates over HTTP: ratcheting, PodTemplate's rules, Warnings.

Raw requests against an in-process server (the `api` fixture). A workload stored with a gitRepo
volume (written straight into the store, as data from before 1.36 would be) stays patchable,
scalable, finalizable and deletable, while an update that adds a gitRepo volume is refused; the
PodTemplate kind gets the template defaults, ValidatePodTemplate and generation; the deprecated
AppArmor annotation in a template comes back as a Warning on create and on generation-moving
updates. kubectl's view of the Warning is in tests/e2e/test_pod_policies.py.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.apiserver.kinds.test_pod_policies import (
    AA, FORBIDDEN, GIT_REPO, MERGE, causes, put_in_store, template, warnings, workload,
)
from tests.conftest import InProcess

JSON_PATCH = {"Content-Type": "application/json-patch+json"}
PODTEMPLATES = "/api/v1/namespaces/default/podtemplates"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
DEPRECATED = '{}.metadata.annotations[{}]: deprecated since v1.30; use the "appArmorProfile" field instead'
# kind → (resource, group, version, path of the pod template in the object)
KINDS: dict[str, tuple[str, str, str, str]] = {
    "Deployment": ("deployments", "apps", "v1", "spec.template"),
    "ReplicaSet": ("replicasets", "apps", "v1", "spec.template"),
    "StatefulSet": ("statefulsets", "apps", "v1", "spec.template"),
    "DaemonSet": ("daemonsets", "apps", "v1", "spec.template"),
    "Job": ("jobs", "batch", "v1", "spec.template"),
    "CronJob": ("cronjobs", "batch", "v1", "spec.jobTemplate.spec.template"),
    "PodTemplate": ("podtemplates", "", "v1", "template"),
}


def an_object(kind: str, tmpl: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(collection path, object) of `kind` around the pod template `tmpl`."""
    if kind == "PodTemplate":
        return PODTEMPLATES, {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "web"}, "template": tmpl}
    return workload(kind, tmpl)


def template_in(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    found: Any = obj
    for key in KINDS[kind][3].split("."):
        found = found[key]
    return dict(found)


def pointer(kind: str) -> str:
    return "/" + KINDS[kind][3].replace(".", "/")


async def store_with_git_repo(api: InProcess, kind: str) -> dict[str, Any]:
    """Create `kind` with an emptyDir volume, then turn it into gitRepo behind validation's back."""
    path, obj = an_object(kind, template(volumes=[{"name": "site", "emptyDir": {}}]))
    status, created, _ = await api.request("POST", path, json=obj)
    assert status == 201, created
    legacy = copy.deepcopy(created)
    template_in(legacy, kind)["spec"]["volumes"] = [{"name": "site", "gitRepo": GIT_REPO}]
    resource, group, version, _ = KINDS[kind]
    await put_in_store(api, resource, group, version, legacy)
    return legacy


# -- ratcheting: a stored gitRepo volume stays, a new one is refused ------------------------------

async def test_a_stored_deployment_with_a_git_repo_volume_can_be_patched_scaled_finalized_and_deleted(
        api: InProcess) -> None:
    await store_with_git_repo(api, "Deployment")
    web = f"{DEPLOYMENTS}/web"
    patch = {"metadata": {"labels": {"tier": "web"}, "finalizers": ["example.com/keep"]}}
    status, answer, _ = await api.request("PATCH", web, json=patch, headers=MERGE)
    assert status == 200, answer
    assert answer["spec"]["template"]["spec"]["volumes"] == [{"name": "site", "gitRepo": GIT_REPO}]
    status, answer, _ = await api.request("PUT", f"{web}/scale", json={
        "apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web"}, "spec": {"replicas": 3}})
    assert (status, answer["kind"], answer["spec"]) == (200, "Scale", {"replicas": 3}), answer
    status, answer, _ = await api.request("DELETE", web)
    assert status == 200, answer
    status, marked, _ = await api.request("GET", web)
    assert marked["metadata"]["deletionTimestamp"] and marked["spec"]["replicas"] == 3
    # What the garbage collector does once its work is done: drop the finalizer.
    status, answer, _ = await api.request("PATCH", web, json={"metadata": {"finalizers": None}}, headers=MERGE)
    assert status == 200, answer
    status, answer, _ = await api.request("GET", web)
    assert (status, answer["reason"]) == (404, "NotFound")


@pytest.mark.parametrize("kind", list(KINDS))
async def test_an_update_keeps_a_stored_git_repo_volume_but_may_not_add_one(api: InProcess, kind: str) -> None:
    await store_with_git_repo(api, kind)
    resource, group, version, tmpl_path = KINDS[kind]
    base = f"/api/{version}" if not group else f"/apis/{group}/{version}"
    url = f"{base}/namespaces/default/{resource}/web"
    status, answer, _ = await api.request("PATCH", url, json={"metadata": {"labels": {"tier": "web"}}}, headers=MERGE)
    assert status == 200, (kind, answer)
    assert template_in(answer, kind)["spec"]["volumes"] == [{"name": "site", "gitRepo": GIT_REPO}]
    add = [{"op": "add", "path": f"{pointer(kind)}/spec/volumes/-", "value": {"name": "docs", "gitRepo": GIT_REPO}}]
    before = api.store.revision
    status, answer, _ = await api.request("PATCH", url, json=add, headers=JSON_PATCH)
    assert (status, answer["reason"]) == (422, "Invalid"), (kind, answer)
    refused = [c for c in causes(answer) if c[1].endswith(".gitRepo")]
    assert refused == [("FieldValueForbidden", f"{tmpl_path}.spec.volumes[1].gitRepo", FORBIDDEN)], kind
    assert api.store.revision == before


# -- PodTemplate: defaults, ValidatePodTemplate, generation -----------------------------------------

async def test_a_pod_template_gets_the_template_defaults_and_generation_one(api: InProcess) -> None:
    path, obj = an_object("PodTemplate", template())
    status, created, _ = await api.request("POST", path, json=obj)
    assert status == 201, created
    assert created["metadata"]["generation"] == 1
    spec = created["template"]["spec"]
    assert {k: spec[k] for k in ("restartPolicy", "dnsPolicy", "terminationGracePeriodSeconds", "schedulerName",
                                 "securityContext")} == {
        "restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "terminationGracePeriodSeconds": 30,
        "schedulerName": "default-scheduler", "securityContext": {}}
    assert spec["containers"][0]["terminationMessagePolicy"] == "File"
    assert "status" not in created


# (case, template, [(reason, field, message)])
POD_TEMPLATE_CASES: list[tuple[str, Any, list[tuple[str, str, str]]]] = [
    ("no template at all", None, [("FieldValueRequired", "template.spec.containers", "Required value")]),
    ("a gitRepo volume", template(volumes=[{"name": "site", "gitRepo": GIT_REPO}]),
     [("FieldValueForbidden", "template.spec.volumes[0].gitRepo", FORBIDDEN)]),
    ("an annotation for a container it lacks", template(annotations={AA + "ghost": "unconfined"}),
     [("FieldValueInvalid", f"template.annotations[{AA}ghost]", 'Invalid value: "ghost": container not found')]),
    ("a Localhost profile without its name", template(securityContext={"appArmorProfile": {"type": "Localhost"}}),
     [("FieldValueRequired", "template.spec.securityContext.appArmorProfile.localhostProfile",
       "Required value: must be set when AppArmor type is Localhost")]),
    ("ephemeral containers", template(ephemeralContainers=[{"name": "debug", "image": "busybox"}]),
     [("FieldValueForbidden", "template.spec.ephemeralContainers",
       "Forbidden: ephemeral containers not allowed in pod template")]),
    ("a bad template label", {"metadata": {"labels": {"app": "not ok"}},
                              "spec": {"containers": [{"name": "app", "image": "nginx"}]}},
     [("FieldValueInvalid", "template.labels",
       "Invalid value: \"not ok\": a valid label must be an empty string or consist of alphanumeric characters, "
       "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  "
       "or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")]),
]


async def test_a_pod_template_is_validated_as_upstream_validate_pod_template_does(api: InProcess) -> None:
    for case, tmpl, expected in POD_TEMPLATE_CASES:
        obj: dict[str, Any] = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "web"}}
        if tmpl is not None:
            obj["template"] = tmpl
        before = api.store.revision
        status, answer, _ = await api.request("POST", PODTEMPLATES, json=obj)
        assert (status, answer.get("reason")) == (422, "Invalid"), (case, answer)
        assert causes(answer) == expected, case
        assert answer["message"].startswith('PodTemplate "web" is invalid: '), case
        assert api.store.revision == before, case


async def test_a_pod_template_counts_only_template_changes_in_its_generation(api: InProcess) -> None:
    path, obj = an_object("PodTemplate", template())
    status, created, _ = await api.request("POST", path, json=obj)
    assert status == 201, created
    url = f"{PODTEMPLATES}/web"
    status, answer, _ = await api.request("PATCH", url, json={"metadata": {"labels": {"a": "b"}}}, headers=MERGE)
    assert (status, answer["metadata"]["generation"]) == (200, 1), answer
    patch = {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.28"}]}}}
    status, answer, _ = await api.request("PATCH", url, json=patch, headers=MERGE)
    assert (status, answer["metadata"]["generation"]) == (200, 2), answer
    status, answer, _ = await api.request("PATCH", url, json={"template": {"spec": {"containers": [
        {"name": "app", "image": "nginx:1.28", "securityContext": {"appArmorProfile": {"type": "Enforce"}}}]}}},
        headers=MERGE)
    assert (status, causes(answer)) == (422, [
        ("FieldValueNotSupported", "template.spec.containers[0].securityContext.appArmorProfile.type",
         'Unsupported value: "Enforce": supported values: "Localhost", "RuntimeDefault", "Unconfined"')])


# -- Warnings: the AppArmor annotation in a template --------------------------------------------

@pytest.mark.parametrize("kind", list(KINDS))
async def test_a_template_annotation_warns_on_create_and_on_updates_that_move_generation(
        api: InProcess, kind: str) -> None:
    resource, group, version, tmpl_path = KINDS[kind]
    tmpl = template(annotations={AA + "app": "runtime/default", AA + "init": "unconfined"},
                    initContainers=[{"name": "init", "image": "busybox"}])
    path, obj = an_object(kind, tmpl)
    status, created, headers = await api.request("POST", path, json=obj)
    assert status == 201, (kind, created)
    # VisitContainers' order: init containers first.
    expected = [DEPRECATED.format(tmpl_path, AA + "init"), DEPRECATED.format(tmpl_path, AA + "app")]
    assert warnings(headers) == expected, kind
    url = f"{path}/web"
    status, answer, headers = await api.request("PATCH", url, json={"metadata": {"labels": {"x": "y"}}},
                                                headers=MERGE)
    assert (status, warnings(headers)) == (200, []), (kind, answer)
    relabel = [{"op": "add", "path": f"{pointer(kind)}/metadata/labels/extra", "value": "1"}]
    status, answer, headers = await api.request("PATCH", url, json=relabel, headers=JSON_PATCH)
    if kind == "Job":  # a Job's template is immutable: refused, and nothing to warn about
        assert (status, warnings(headers)) == (422, []), answer
        return
    assert status == 200, (kind, answer)
    assert answer["metadata"]["generation"] == created["metadata"]["generation"] + 1
    assert warnings(headers) == expected, kind


async def test_a_profile_in_force_silences_the_template_warning(api: InProcess) -> None:
    pod_level = template(annotations={AA + "app": "runtime/default"},
                         securityContext={"appArmorProfile": {"type": "RuntimeDefault"}})
    path, obj = an_object("Deployment", pod_level)
    status, answer, headers = await api.request("POST", path, json=obj)
    assert (status, warnings(headers)) == (201, []), answer
    container_level = template(annotations={AA + "app": "unconfined", AA + "init": "unconfined"},
                               containers=[{"name": "app", "image": "nginx", "securityContext": {
                                   "appArmorProfile": {"type": "Unconfined"}}}],
                               initContainers=[{"name": "init", "image": "busybox"}])
    path, obj = an_object("ReplicaSet", container_level)
    status, answer, headers = await api.request("POST", path, json=obj)
    assert status == 201, answer
    assert warnings(headers) == [DEPRECATED.format("spec.template", AA + "init")]


async def test_a_status_write_does_not_warn(api: InProcess) -> None:
    path, obj = an_object("Deployment", template(annotations={AA + "app": "runtime/default"}))
    status, _, _ = await api.request("POST", path, json=obj)
    assert status == 201
    _, current, _ = await api.request("GET", f"{path}/web")
    current["status"] = {"replicas": 2}
    status, answer, headers = await api.request("PUT", f"{path}/web/status", json=current)
    assert (status, answer["status"], warnings(headers)) == (200, {"replicas": 2}, []), answer


async def test_scaling_moves_the_generation_and_so_warns(api: InProcess) -> None:
    path, obj = an_object("Deployment", template(annotations={AA + "app": "runtime/default"}))
    status, _, _ = await api.request("POST", path, json=obj)
    assert status == 201
    status, scale, headers = await api.request("PATCH", f"{path}/web/scale", json={"spec": {"replicas": 3}},
                                               headers=MERGE)
    assert (status, scale["spec"]["replicas"]) == (200, 3), scale
    assert warnings(headers) == [DEPRECATED.format("spec.template", AA + "app")]
