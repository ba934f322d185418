"""kubectl v1.36.3 against a real `haru up`: gitRepo volumes refused, AppArmor only as the field.

What a user sees: the Invalid text kubectl prints for a gitRepo volume (pod and deployment), the
`Warning:` line for a deprecated AppArmor annotation (a pod's, with the field it became, and a
deployment template's), and `haru up` refusing a locked gate or admission manifests with their gate
off, as kube-apiserver refuses to start. The same rules over raw HTTP are in
tests/apiserver/kinds/test_pod_policies.py and test_workload_templates.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from apiserver.kinds import volume_policy
from tests.conftest import ROOT, Cluster

pytestmark = pytest.mark.slow

AA = "container.apparmor.security.beta.kubernetes.io/"


def _ns(haru: Cluster, name: str) -> str:
    haru.kubectl("create", "namespace", name)
    return name


def test_kubectl_apply_of_a_pod_with_a_git_repo_volume_prints_the_forbidden_cause(haru: Cluster) -> None:
    ns = _ns(haru, "gitrepo-pod")
    manifest = textwrap.dedent("""\
        apiVersion: v1
        kind: Pod
        metadata:
          name: site
        spec:
          containers:
          - name: web
            image: nginx:1.27
            volumeMounts:
            - {name: html, mountPath: /usr/share/nginx/html}
          volumes:
          - name: html
            gitRepo:
              repository: https://example.com/site.git
              revision: main
        """)
    result = haru.kubectl("-n", ns, "apply", "-f", "-", input=manifest, check=False)
    assert result.returncode == 1
    assert result.stderr.strip() == (f'The Pod "site" is invalid: spec.volumes[0].gitRepo: Forbidden: '
                                     f"{volume_policy.GIT_REPO_DISABLED}")
    assert haru.kubectl("-n", ns, "get", "pods", "-o", "name").stdout == ""


def test_kubectl_apply_of_a_deployment_with_a_git_repo_volume_is_refused(haru: Cluster) -> None:
    ns = _ns(haru, "gitrepo-deploy")
    manifest = textwrap.dedent("""\
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: site
        spec:
          selector:
            matchLabels: {app: site}
          template:
            metadata:
              labels: {app: site}
            spec:
              containers:
              - {name: web, image: nginx:1.27}
              volumes:
              - name: html
                gitRepo: {repository: https://example.com/site.git}
        """)
    result = haru.kubectl("-n", ns, "apply", "-f", "-", input=manifest, check=False)
    assert result.returncode == 1
    assert result.stderr.strip() == (f'The Deployment "site" is invalid: spec.template.spec.volumes[0].gitRepo: '
                                     f"Forbidden: {volume_policy.GIT_REPO_DISABLED}")


def test_kubectl_apply_warns_about_an_apparmor_annotation_and_the_pod_gets_the_field(haru: Cluster) -> None:
    ns = _ns(haru, "apparmor")
    manifest = textwrap.dedent(f"""\
        apiVersion: v1
        kind: Pod
        metadata:
          name: confined
          annotations:
            {AA}web: localhost/k8s-apparmor-example-deny-write
        spec:
          containers:
          - name: web
            image: busybox:1.36
            command: ["sh", "-c", "sleep 3600"]
        """)
    result = haru.kubectl("-n", ns, "apply", "-f", "-", input=manifest)
    assert result.stdout.strip() == "pod/confined created"
    assert result.stderr.strip() == (f"Warning: metadata.annotations[{AA}web]: deprecated since v1.30; "
                                     'use the "appArmorProfile" field instead')
    profile = haru.kubectl("-n", ns, "get", "pod", "confined", "-o",
                           "jsonpath={.spec.containers[0].securityContext.appArmorProfile}").stdout
    assert json.loads(profile) == {"type": "Localhost", "localhostProfile": "k8s-apparmor-example-deny-write"}


def test_kubectl_apply_of_a_deployment_warns_about_its_template_annotation(haru: Cluster) -> None:
    ns = _ns(haru, "apparmor-deploy")
    manifest = textwrap.dedent(f"""\
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: confined
        spec:
          selector:
            matchLabels: {{app: confined}}
          template:
            metadata:
              labels: {{app: confined}}
              annotations:
                {AA}web: runtime/default
            spec:
              containers:
              - {{name: web, image: "busybox:1.36"}}
        """)
    warning = (f"Warning: spec.template.metadata.annotations[{AA}web]: deprecated since v1.30; "
               'use the "appArmorProfile" field instead')
    result = haru.kubectl("-n", ns, "apply", "-f", "-", input=manifest)
    assert (result.stdout.strip(), result.stderr.strip()) == ("deployment.apps/confined created", warning)
    # The template is kept as written: no field is derived from a template's annotation.
    context = haru.kubectl("-n", ns, "get", "deployment", "confined", "-o",
                           "jsonpath={.spec.template.spec.containers[0].securityContext}").stdout
    assert context == ""
    # A change to the template moves the generation and warns again; a label change does not.
    result = haru.kubectl("-n", ns, "apply", "-f", "-", input=manifest.replace("busybox:1.36", "busybox:1.37"))
    assert (result.stdout.strip(), result.stderr.strip()) == ("deployment.apps/confined configured", warning)
    result = haru.kubectl("-n", ns, "label", "deployment", "confined", "tier=web")
    assert (result.stdout.strip(), result.stderr.strip()) == ("deployment.apps/confined labeled", "")


def test_kubectl_apply_of_an_annotation_that_contradicts_the_field_is_refused(haru: Cluster) -> None:
    ns = _ns(haru, "apparmor-mismatch")
    manifest = textwrap.dedent(f"""\
        apiVersion: v1
        kind: Pod
        metadata:
          name: mixed
          annotations:
            {AA}web: runtime/default
        spec:
          containers:
          - name: web
            image: busybox:1.36
            securityContext:
              appArmorProfile: {{type: Unconfined}}
        """)
    result = haru.kubectl("-n", ns, "apply", "-f", "-", input=manifest, check=False)
    assert result.returncode == 1
    assert result.stderr.strip() == ('The Pod "mixed" is invalid: spec.containers[0].securityContext.appArmorProfile'
                                     ".type: Forbidden: apparmor type in annotation and field must match")


def _haru_up(tmp_path: object, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cluster.cli", "up", "--data-dir", f"{tmp_path}/data", "--port", "0",
                           *flags], cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_haru_up_refuses_to_unlock_the_git_repo_gate(tmp_path: object) -> None:
    result = _haru_up(tmp_path, "--feature-gates", "GitRepoVolumeDriver=true")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == ('haru up: invalid argument "GitRepoVolumeDriver=true" for "--feature-gates" flag: '
                             "cannot set feature gate GitRepoVolumeDriver to true, feature is locked to false\n")


def test_haru_up_refuses_admission_manifests_with_their_gate_off(tmp_path: object) -> None:
    result = _haru_up(tmp_path, "--admission-manifests", str(tmp_path),
                      "--feature-gates", "ManifestBasedAdmissionControlConfig=false")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == ("haru up: --admission-manifests: Forbidden: --admission-manifests requires the "
                             "ManifestBasedAdmissionControlConfig feature gate to be enabled\n")
