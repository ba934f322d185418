"""helm v4.2.3 against a real `haru up`: install, upgrade, list, rollback, uninstall of a small chart.

Helm writes its release records as protobuf Secrets, applies the manifests server-side, and deletes
with protobuf DeleteOptions, so this exercises all three paths at once.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.conftest import Cluster

pytestmark = pytest.mark.slow
CHART = os.path.join(os.path.dirname(os.path.dirname(__file__)), "charts", "small")


def _configmap(haru: Cluster, ns: str) -> dict:
    return json.loads(haru.kubectl("-n", ns, "get", "configmap", "rel1-config", "-o", "json").stdout)


def test_helm_release_lifecycle(haru: Cluster) -> None:
    ns = "helm-life"
    haru.kubectl("create", "namespace", ns)
    haru.helm("install", "rel1", CHART, "-n", ns)
    assert _configmap(haru, ns)["data"]["greeting"] == "hello"
    deploy = json.loads(haru.kubectl("-n", ns, "get", "deploy", "rel1-web", "-o", "json").stdout)
    assert deploy["metadata"]["annotations"]["meta.helm.sh/release-name"] == "rel1"

    haru.helm("upgrade", "rel1", CHART, "-n", ns, "--set", "greeting=bonjour", "--set", "replicas=2")
    assert _configmap(haru, ns)["data"]["greeting"] == "bonjour"
    releases = json.loads(haru.helm("list", "-n", ns, "-o", "json").stdout)
    assert [(r["name"], r["revision"], r["status"]) for r in releases] == [("rel1", "2", "deployed")]

    haru.helm("rollback", "rel1", "1", "-n", ns)
    assert _configmap(haru, ns)["data"]["greeting"] == "hello"
    history = json.loads(haru.helm("history", "rel1", "-n", ns, "-o", "json").stdout)
    assert [h["revision"] for h in history] == [1, 2, 3]

    haru.helm("uninstall", "rel1", "-n", ns)
    assert haru.kubectl("-n", ns, "get", "configmap", "rel1-config", check=False).returncode == 1
    assert json.loads(haru.helm("list", "-n", ns, "-o", "json").stdout) == []
    secrets = haru.kubectl("-n", ns, "get", "secrets", "-l", "owner=helm", "-o", "name").stdout
    assert secrets.strip() == ""
