"""The ServiceAccount plugin on a fake cluster: the account must exist (upstream's 403 text, the
retry mark only for `default`), the projected token volume and its mounts, automount opt-outs,
imagePullSecrets, mirror pods."""

from __future__ import annotations

import re
from typing import Any

import pytest

from admission import errors
from admission.plugins.service_account import MOUNT_PATH, ServiceAccountPlugin
from tests.admission.fakes import FakeView, attrs, pod


def _account(view: FakeView, name: str = "default", namespace: str = "default", **more: Any) -> None:
    view.put("", "serviceaccounts", {"metadata": {"name": name, "namespace": namespace}, **more})


def _admit(view: FakeView, obj: dict[str, Any]) -> dict[str, Any]:
    request = attrs(obj)
    ServiceAccountPlugin(view).admit(request)
    return request.object


def test_a_missing_account_is_refused_with_upstreams_text():
    view = FakeView()
    request = attrs(pod("web"))
    request.object["spec"]["serviceAccountName"] = "builder"
    with pytest.raises(errors.Rejection) as refused:
        ServiceAccountPlugin(view).admit(request)
    assert refused.value.code == 403 and refused.value.reason == "Forbidden"
    assert refused.value.message == ('pods "web" is forbidden: error looking up service account default/builder: '
                                     'serviceaccount "builder" not found')
    assert refused.value.retry is False


def test_a_missing_default_account_is_refused_but_marked_for_a_retry():
    with pytest.raises(errors.Rejection) as refused:
        _admit(FakeView(), pod("web"))
    assert refused.value.message.endswith('error looking up service account default/default: '
                                          'serviceaccount "default" not found')
    assert refused.value.retry is True


def test_the_pod_gets_the_projected_token_volume_in_every_container():
    view = FakeView()
    _account(view)
    obj = pod(containers=[{"name": "a", "image": "x"}, {"name": "b", "image": "x"}])
    obj["spec"]["initContainers"] = [{"name": "init", "image": "x"}]
    spec = _admit(view, obj)["spec"]
    assert spec["serviceAccountName"] == spec["serviceAccount"] == "default"
    (volume,) = spec["volumes"]
    assert re.fullmatch(r"kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}", volume["name"])
    assert volume["projected"] == {"sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
    ], "defaultMode": 420}
    for container in spec["containers"] + spec["initContainers"]:
        assert container["volumeMounts"] == [{"name": volume["name"], "readOnly": True, "mountPath": MOUNT_PATH}]


def test_a_container_with_its_own_mount_there_keeps_it():
    view = FakeView()
    _account(view)
    mine = {"name": "own", "mountPath": MOUNT_PATH}
    obj = pod(containers=[{"name": "a", "image": "x", "volumeMounts": [mine]}, {"name": "b", "image": "x"}])
    obj["spec"]["volumes"] = [{"name": "own", "emptyDir": {}}]
    spec = _admit(view, obj)["spec"]
    assert spec["containers"][0]["volumeMounts"] == [mine]
    assert spec["containers"][1]["volumeMounts"][0]["name"].startswith("kube-api-access-")
    assert len(spec["volumes"]) == 2


@pytest.mark.parametrize(("pod_says", "account_says", "mounted"), [
    (False, None, False), (None, False, False), (True, False, True), (None, None, True), (None, True, True),
])
def test_automount_the_pod_decides_else_the_account(pod_says, account_says, mounted):
    view = FakeView()
    _account(view, **({} if account_says is None else {"automountServiceAccountToken": account_says}))
    obj = pod()
    if pod_says is not None:
        obj["spec"]["automountServiceAccountToken"] = pod_says
    spec = _admit(view, obj)["spec"]
    assert bool(spec.get("volumes")) is mounted
    assert bool(spec["containers"][0].get("volumeMounts")) is mounted


def test_the_accounts_image_pull_secrets_fill_a_pod_without_any():
    view = FakeView()
    _account(view, "puller", imagePullSecrets=[{"name": "registry"}])
    obj = pod()
    obj["spec"]["serviceAccountName"] = "puller"
    assert _admit(view, obj)["spec"]["imagePullSecrets"] == [{"name": "registry"}]
    own = pod()
    own["spec"].update(serviceAccountName="puller", imagePullSecrets=[{"name": "mine"}])
    assert _admit(view, own)["spec"]["imagePullSecrets"] == [{"name": "mine"}]


def test_mirror_pods_are_not_changed_and_may_not_name_an_account():
    view = FakeView()  # no accounts at all: a mirror pod does not need one
    mirror = pod("static-web")
    mirror["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "abc"}
    admitted = _admit(view, mirror)
    assert "serviceAccountName" not in admitted["spec"] and "volumes" not in admitted["spec"]
    ServiceAccountPlugin(view).validate(attrs(admitted))
    admitted["spec"]["serviceAccountName"] = "default"
    with pytest.raises(errors.Rejection) as refused:
        ServiceAccountPlugin(view).validate(attrs(admitted))
    assert refused.value.message == 'pods "static-web" is forbidden: a mirror pod may not reference service accounts'


def test_updates_and_other_resources_are_left_alone():
    view = FakeView()
    ServiceAccountPlugin(view).admit(attrs(pod(), operation="UPDATE", old=pod()))
    ServiceAccountPlugin(view).admit(attrs(pod(), subresource="status"))
    ServiceAccountPlugin(view).admit(attrs({"metadata": {"name": "cm", "namespace": "default"}}, resource="configmaps",
                                           kind="ConfigMap"))
