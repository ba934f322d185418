"""kubectl v1.36.3 against a real `haru up`: the acceptance list of issue #3, command by command.

Each test works in its own namespace so the order of tests does not matter. These are end-to-end
tests with a real process and a real client binary, so they are marked slow (CI runs them).
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
import time

import pytest

from tests.conftest import Cluster

pytestmark = pytest.mark.slow


def _ns(haru: Cluster, name: str) -> str:
    haru.kubectl("create", "namespace", name)
    return name


def test_version_reports_a_1_36_server(haru: Cluster) -> None:
    out = json.loads(haru.kubectl("version", "-o", "json").stdout)
    assert out["serverVersion"]["gitVersion"].startswith("v1.36.")
    assert out["serverVersion"]["major"] == "1" and out["serverVersion"]["minor"] == "36"


def test_api_resources_lists_the_builtin_kinds(haru: Cluster) -> None:
    out = haru.kubectl("api-resources", "--no-headers").stdout
    rows: dict[str, str] = {}
    for line in out.splitlines():  # the core group first: metrics.k8s.io has a `pods` too
        rows.setdefault(line.split()[0], line)
    assert "pods" in rows and " po " in rows["pods"] and "true" in rows["pods"] and rows["pods"].rstrip().endswith("Pod")
    assert "deployments" in rows and "apps/v1" in rows["deployments"]
    assert "resourceclaims" in rows and "resource.k8s.io/v1" in rows["resourceclaims"]
    assert "podgroups" in rows and "scheduling.k8s.io/v1alpha2" in rows["podgroups"]


def test_explain_reads_the_openapi_schema(haru: Cluster) -> None:
    out = haru.kubectl("explain", "pods.spec.containers").stdout
    assert "KIND:       Pod" in out and "FIELD: containers <[]Container>" in out
    assert "image\t<string>" in out or "image <string>" in out.replace("\t", " ")


def test_create_generators_send_protobuf_and_get_shows_the_objects(haru: Cluster) -> None:
    ns = _ns(haru, "gen")
    haru.kubectl("-n", ns, "create", "configmap", "cm1", "--from-literal=a=1")
    haru.kubectl("-n", ns, "create", "secret", "generic", "s1", "--from-literal=p=secret")
    haru.kubectl("-n", ns, "create", "deployment", "web", "--image=nginx:1.27", "--replicas=2")
    haru.kubectl("-n", ns, "create", "job", "j1", "--image=busybox")
    haru.kubectl("-n", ns, "create", "service", "clusterip", "svc1", "--tcp=80:8080")
    haru.kubectl("-n", ns, "create", "serviceaccount", "sa1")
    haru.kubectl("-n", ns, "create", "role", "r1", "--verb=get", "--resource=pods")
    haru.kubectl("-n", ns, "create", "rolebinding", "rb1", "--role=r1", "--serviceaccount=gen:sa1")
    cm = json.loads(haru.kubectl("-n", ns, "get", "configmap", "cm1", "-o", "json").stdout)
    assert cm["data"] == {"a": "1"} and cm["metadata"]["uid"] and cm["metadata"]["resourceVersion"]
    secret = json.loads(haru.kubectl("-n", ns, "get", "secret", "s1", "-o", "json").stdout)
    assert secret["type"] == "Opaque" and secret["data"] == {"p": "c2VjcmV0"}
    deploy = json.loads(haru.kubectl("-n", ns, "get", "deploy", "web", "-o", "json").stdout)
    assert deploy["spec"]["replicas"] == 2 and deploy["metadata"]["generation"] == 1
    svc = json.loads(haru.kubectl("-n", ns, "get", "svc", "svc1", "-o", "json").stdout)
    assert svc["spec"]["ports"][0]["port"] == 80 and svc["spec"]["clusterIP"]
    names = haru.kubectl("-n", ns, "get", "configmap,secret,deploy,job,svc,sa,role,rolebinding", "-o", "name").stdout
    for expected in ("configmap/cm1", "secret/s1", "deployment.apps/web", "job.batch/j1", "service/svc1",
                     "serviceaccount/sa1", "role.rbac.authorization.k8s.io/r1",
                     "rolebinding.rbac.authorization.k8s.io/rb1"):
        assert expected in names


def test_get_in_every_output_format(haru: Cluster) -> None:
    ns = _ns(haru, "formats")
    # A schedulerName nobody serves keeps the pod Pending while the table is read (haru up schedules).
    haru.kubectl("-n", ns, "run", "p1", "--image=nginx:1.27", "--labels=app=web",
                 '--overrides={"spec": {"schedulerName": "nobody"}}')
    table = haru.kubectl("-n", ns, "get", "pods").stdout.splitlines()
    assert table[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert table[1].split()[:4] == ["p1", "0/1", "Pending", "0"]
    wide = haru.kubectl("-n", ns, "get", "pods", "-o", "wide").stdout.splitlines()
    assert wide[0].split()[5:] == ["IP", "NODE", "NOMINATED", "NODE", "READINESS", "GATES"]
    assert yaml_name(haru.kubectl("-n", ns, "get", "pod", "p1", "-o", "yaml").stdout) == "p1"
    assert haru.kubectl("-n", ns, "get", "pod", "p1", "-o", "jsonpath={.spec.containers[0].image}").stdout == "nginx:1.27"
    custom = haru.kubectl("-n", ns, "get", "pods", "-o", "custom-columns=N:.metadata.name,P:.spec.restartPolicy").stdout
    assert custom.split() == ["N", "P", "p1", "Always"]
    assert haru.kubectl("-n", ns, "get", "pods", "-l", "app=web", "-o", "name").stdout.strip() == "pod/p1"
    assert haru.kubectl("-n", ns, "get", "pods", "-l", "app!=web", "-o", "name").stdout.strip() == ""
    described = haru.kubectl("-n", ns, "describe", "pod", "p1").stdout
    assert "Name:" in described and "p1" in described and "nginx:1.27" in described


def yaml_name(text: str) -> str:
    import yaml

    return yaml.safe_load(text)["metadata"]["name"]


MANIFEST = textwrap.dedent("""\
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: app-config
    data:
      mode: "{mode}"
    ---
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: app
      labels: {{app: app}}
    spec:
      replicas: 1
      selector: {{matchLabels: {{app: app}}}}
      template:
        metadata: {{labels: {{app: app}}}}
        spec:
          containers:
          - name: main
            image: "{image}"
            env: [{{name: MODE, value: "{mode}"}}]
    """)


def test_apply_twice_creates_then_merges(haru: Cluster) -> None:
    ns = _ns(haru, "applied")
    first = haru.kubectl("-n", ns, "apply", "-f", "-", input=MANIFEST.format(mode="a", image="nginx:1.26"))
    assert "configmap/app-config created" in first.stdout and "deployment.apps/app created" in first.stdout
    second = haru.kubectl("-n", ns, "apply", "-f", "-", input=MANIFEST.format(mode="b", image="nginx:1.27"))
    assert "configmap/app-config configured" in second.stdout and "deployment.apps/app configured" in second.stdout
    deploy = json.loads(haru.kubectl("-n", ns, "get", "deploy", "app", "-o", "json").stdout)
    container = deploy["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "nginx:1.27" and container["env"] == [{"name": "MODE", "value": "b"}]
    assert deploy["metadata"]["generation"] == 2
    again = haru.kubectl("-n", ns, "apply", "-f", "-", input=MANIFEST.format(mode="b", image="nginx:1.27"))
    assert "unchanged" in again.stdout


def test_apply_server_side_and_diff(haru: Cluster) -> None:
    ns = _ns(haru, "ssa")
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: one\n"
    out = haru.kubectl("-n", ns, "apply", "--server-side", "-f", "-", input=cm)
    assert "configmap/c serverside-applied" in out.stdout
    obj = json.loads(haru.kubectl("-n", ns, "get", "cm", "c", "-o", "json", "--show-managed-fields").stdout)
    managers = {(m["manager"], m["operation"]) for m in obj["metadata"]["managedFields"]}
    assert ("kubectl", "Apply") in managers
    diff = haru.kubectl("-n", ns, "diff", "-f", "-", input=cm.replace("one", "two"), check=False)
    assert diff.returncode == 1 and "-  k: one" in diff.stdout and "+  k: two" in diff.stdout
    same = haru.kubectl("-n", ns, "diff", "--server-side", "-f", "-", input=cm, check=False)
    assert same.returncode == 0, same.stdout + same.stderr


def test_patch_in_all_types_label_annotate_scale(haru: Cluster) -> None:
    ns = _ns(haru, "patching")
    haru.kubectl("-n", ns, "create", "deployment", "web", "--image=nginx:1.27")
    haru.kubectl("-n", ns, "patch", "deploy", "web", "-p",
                 '{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.28"}]}}}}')
    haru.kubectl("-n", ns, "patch", "deploy", "web", "--type=merge", "-p", '{"spec":{"minReadySeconds":5}}')
    haru.kubectl("-n", ns, "patch", "deploy", "web", "--type=json",
                 "-p", '[{"op":"replace","path":"/spec/revisionHistoryLimit","value":3}]')
    haru.kubectl("-n", ns, "label", "deploy", "web", "tier=front")
    haru.kubectl("-n", ns, "annotate", "deploy", "web", "note=hello")
    out = haru.kubectl("-n", ns, "scale", "deploy", "web", "--replicas=4").stdout
    assert "deployment.apps/web scaled" in out
    deploy = json.loads(haru.kubectl("-n", ns, "get", "deploy", "web", "-o", "json").stdout)
    assert deploy["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.28"
    assert deploy["spec"]["minReadySeconds"] == 5 and deploy["spec"]["revisionHistoryLimit"] == 3
    assert deploy["metadata"]["labels"]["tier"] == "front" and deploy["metadata"]["annotations"]["note"] == "hello"
    assert deploy["spec"]["replicas"] == 4
    bad = haru.kubectl("-n", ns, "patch", "deploy", "web", "--type=json",
                       "-p", '[{"op":"test","path":"/spec/replicas","value":9}]', check=False)
    assert bad.returncode != 0


def test_edit_with_an_editor_script(haru: Cluster, tmp_path: "os.PathLike[str]") -> None:
    ns = _ns(haru, "editing")
    haru.kubectl("-n", ns, "create", "configmap", "cm", "--from-literal=k=old")
    editor = os.path.join(str(tmp_path), "editor.sh")
    with open(editor, "w") as f:
        f.write("#!/bin/sh\nsed -i 's/k: old/k: new/' \"$1\"\n")
    os.chmod(editor, 0o755)
    haru.kubectl("-n", ns, "edit", "configmap", "cm", env={"KUBE_EDITOR": editor})
    assert haru.kubectl("-n", ns, "get", "cm", "cm", "-o", "jsonpath={.data.k}").stdout == "new"


def test_get_watch_sees_events(haru: Cluster) -> None:
    ns = _ns(haru, "watching")
    env = {**os.environ, "KUBECONFIG": haru.kubeconfig, "HOME": haru.data_dir}
    from tests import realclients

    watcher = subprocess.Popen([realclients.kubectl(), "-n", ns, "get", "configmaps", "-w", "-o", "name"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        time.sleep(1.0)
        haru.kubectl("-n", ns, "create", "configmap", "w1")
        haru.kubectl("-n", ns, "create", "configmap", "w2")
        deadline = time.monotonic() + 20
        seen: list[str] = []
        assert watcher.stdout is not None
        while time.monotonic() < deadline and not {"configmap/w1", "configmap/w2"} <= set(seen):
            seen.append(watcher.stdout.readline().strip())
        assert {"configmap/w1", "configmap/w2"} <= set(seen)
    finally:
        watcher.kill()
        watcher.communicate()


def test_wait_for_jsonpath_and_delete(haru: Cluster) -> None:
    ns = _ns(haru, "waiting")
    haru.kubectl("-n", ns, "create", "configmap", "cm", "--from-literal=ready=yes")
    out = haru.kubectl("-n", ns, "wait", "configmap/cm", "--for=jsonpath={.data.ready}=yes", "--timeout=20s")
    assert "condition met" in out.stdout
    haru.kubectl("-n", ns, "patch", "configmap", "cm", "--type=merge", "-p", '{"metadata":{"finalizers":["haru.test/hold"]}}')
    deleted = haru.kubectl("-n", ns, "delete", "configmap", "cm", "--wait=false")
    assert 'configmap "cm" deleted' in deleted.stdout
    held = json.loads(haru.kubectl("-n", ns, "get", "configmap", "cm", "-o", "json").stdout)
    assert held["metadata"]["deletionTimestamp"]
    waiter = subprocess.Popen(
        [__import__("tests.realclients", fromlist=["kubectl"]).kubectl(), "-n", ns, "wait", "configmap/cm",
         "--for=delete", "--timeout=30s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "KUBECONFIG": haru.kubeconfig, "HOME": haru.data_dir})
    time.sleep(1.0)
    haru.kubectl("-n", ns, "patch", "configmap", "cm", "--type=json", "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')
    out, err = waiter.communicate(timeout=40)
    assert waiter.returncode == 0, err
    assert haru.kubectl("-n", ns, "get", "configmap", "cm", check=False).returncode == 1


def test_delete_all_and_without_finalizers(haru: Cluster) -> None:
    ns = _ns(haru, "deleting")
    for name in ("a", "b", "c"):
        haru.kubectl("-n", ns, "create", "configmap", name)
    out = haru.kubectl("-n", ns, "delete", "configmap", "--all").stdout
    assert all(f'configmap "{n}" deleted' in out for n in ("a", "b", "c"))
    # kube-root-ca.crt went too, and its publisher puts it back at once, as in any cluster.
    left = haru.kubectl("-n", ns, "get", "configmaps", "-o", "name").stdout.split()
    assert set(left) <= {"configmap/kube-root-ca.crt"}
    haru.kubectl("-n", ns, "run", "p", "--image=busybox")
    assert 'pod "p" deleted' in haru.kubectl("-n", ns, "delete", "pod", "p").stdout


def test_raw_metrics_and_auth(haru: Cluster) -> None:
    metrics = haru.kubectl("get", "--raw", "/metrics").stdout
    assert "apiserver_request_total{" in metrics and "apiserver_storage_objects{" in metrics
    assert haru.kubectl("auth", "can-i", "create", "pods").stdout.strip() == "yes"
    whoami = haru.kubectl("auth", "whoami").stdout
    assert "Username" in whoami and "kubernetes-admin" in whoami


def test_errors_come_back_as_kube_status(haru: Cluster) -> None:
    missing = haru.kubectl("get", "pod", "nosuch", check=False)
    assert missing.returncode == 1 and 'Error from server (NotFound): pods "nosuch" not found' in missing.stderr
    manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dup\n"
    haru.kubectl("create", "-f", "-", input=manifest)
    dup = haru.kubectl("create", "-f", "-", input=manifest, check=False)
    assert 'Error from server (AlreadyExists)' in dup.stderr and 'configmaps "dup" already exists' in dup.stderr
    nons = haru.kubectl("-n", "nowhere", "create", "configmap", "x", check=False)
    assert 'namespaces "nowhere" not found' in nons.stderr


def test_deleting_a_namespace_finishes(haru: Cluster) -> None:
    ns = _ns(haru, "short-lived")
    haru.kubectl("-n", ns, "create", "configmap", "inside")
    haru.kubectl("-n", ns, "run", "p", "--image=busybox")
    out = haru.kubectl("delete", "namespace", ns, "--timeout=30s")
    assert f'namespace "{ns}" deleted' in out.stdout
    assert haru.kubectl("get", "namespace", ns, check=False).returncode == 1
