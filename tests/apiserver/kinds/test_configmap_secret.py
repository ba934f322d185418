"""ConfigMaps and Secrets: keys, sizes, stringData, secret types, `type` and `immutable`."""

from __future__ import annotations

import base64

import pytest

from apiserver import errors
from apiserver.kinds import secret
from tests.apiserver.kinds.writes import create, created, edited, messages, strategy, update


def configmaps():
    return strategy("", "configmaps", has_status=False)


def secrets():
    return strategy("", "secrets", has_status=False)


def a_configmap(**body) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "default"}, **body}


def a_secret(**body) -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"}, **body}


@pytest.mark.parametrize("key, ok", [("app.properties", True), ("KEY_1", True), ("a/b", False), ("..", False), ("..x", False)],
                         ids=["dots are fine", "upper case and underscores are fine", "no slashes", "not '..'",
                              "no leading '..'"])
def test_config_keys(key, ok):
    assert (create(configmaps(), a_configmap(data={key: "v"})) == []) is ok


def test_a_key_may_not_be_in_both_data_and_binary_data():
    assert messages(create(configmaps(), a_configmap(data={"k": "v"}, binaryData={"k": "AA=="}))) == [
        'data[k]: Invalid value: "k": duplicate of key present in binaryData']


def test_a_configmap_over_one_mebibyte_is_too_long():
    assert messages(create(configmaps(), a_configmap(data={"big": "x" * (1024 * 1024 + 1)}))) == [
        "Too long: must have at most 1048576 bytes"]


@pytest.mark.parametrize("kind, resource", [("ConfigMap", "configmaps"), ("Secret", "secrets")])
def test_immutable_objects_keep_their_data_and_the_flag(kind, resource):
    s = strategy("", resource, has_status=False)
    field = "data"
    old = created(s, {"kind": kind, "metadata": {"name": "x", "namespace": "default"}, "immutable": True,
                      field: {"k": "dg=="}})
    new = edited(old)
    new[field] = {"k": "dw=="}
    new["immutable"] = False
    assert messages(update(s, new, old)) == ["immutable: Forbidden: field is immutable when `immutable` is set",
                                             "data: Forbidden: field is immutable when `immutable` is set"]


def test_string_data_is_folded_into_data_and_wins():
    s = created(secrets(), a_secret(data={"user": base64.b64encode(b"old").decode()}, stringData={"user": "admin", "pw": "é"}))
    assert "stringData" not in s
    assert {k: base64.b64decode(v).decode() for k, v in s["data"].items()} == {"user": "admin", "pw": "é"}
    assert s["type"] == "Opaque"


@pytest.mark.parametrize("value, position", [("aGk=", None), ("aGk", 0), ("aGk=aGk=", 4), ("a$Gk", 1), ("aGlkZQ", 4)],
                         ids=["valid", "missing padding", "data after padding", "a bad character", "a short last quantum"])
def test_base64_errors_report_go_s_byte_offset(value, position):
    assert secret.base64_error(value) == position


def test_data_that_is_not_base64_fails_the_request_like_decoding_does():
    with pytest.raises(errors.APIError) as raised:
        create(secrets(), a_secret(data={"k": "not base64!"}))
    assert (raised.value.code, raised.value.message) == (
        400, 'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3')


@pytest.mark.parametrize("kind, data, expected", [
    ("kubernetes.io/tls", {}, ["data[tls.crt]: Required value", "data[tls.key]: Required value"]),
    ("kubernetes.io/basic-auth", {}, ["data[username]: Required value", "data[password]: Required value"]),
    ("kubernetes.io/basic-auth", {"username": "YQ=="}, []),
    ("kubernetes.io/dockerconfigjson", {".dockerconfigjson": base64.b64encode(b"{}").decode()}, []),
    ("kubernetes.io/service-account-token", {},
     ["metadata.annotations[kubernetes.io/service-account.name]: Required value"]),
], ids=["TLS needs a certificate and key", "basic auth needs a username or password", "a username is enough",
        "docker config JSON parses", "a token names its service account"])
def test_secret_types_need_their_keys(kind, data, expected):
    assert messages(create(secrets(), a_secret(type=kind, data=data))) == expected


def test_a_secret_type_is_immutable():
    s = secrets()
    old = created(s, a_secret(data={"tls.crt": "YQ==", "tls.key": "YQ=="}))
    new = edited(old)
    new["type"] = "kubernetes.io/tls"
    assert messages(update(s, new, old)) == ['type: Invalid value: "kubernetes.io/tls": field is immutable']
