"""Policies and bindings from files (KEP-5793, manifest-based admission control, alpha in 1.36).

`load(directory, prepare)` reads every *.yaml, *.yml and *.json file in name order (YAML may
hold several documents; a `v1` `List` wraps items), accepts the four admissionregistration.k8s.io/v1
policy kinds, defaults and validates each object with `prepare` (the API's own rules, lent by the
API server), and applies the manifest rules: names end in ".static.k8s.io" and are unique per
kind, no paramKind or paramRef, every binding names a policy of the same set. Any problem stops
the server from starting with "error loading <file>: …", as kube-apiserver does. The result
feeds `source.StaticPolicies`; such objects exist outside the API (`is_static_name`). Like
staticManifestsDir upstream, a directory needs the `GATE` feature gate on (`check_gate`, asked by
`cluster/cli.py` before the server starts).
"""

from __future__ import annotations

import os
from typing import Any, Callable

import yaml

from admission.policy.source import StaticPolicies

SUFFIX = ".static.k8s.io"
API_VERSION = "admissionregistration.k8s.io/v1"
_KINDS = {
    "ValidatingAdmissionPolicy": "validating", "ValidatingAdmissionPolicyBinding": "validating_bindings",
    "MutatingAdmissionPolicy": "mutating", "MutatingAdmissionPolicyBinding": "mutating_bindings",
}
_EXTENSIONS = (".yaml", ".yml", ".json")


# The KEP-5793 gate (alpha in 1.36; on in haru like every alpha gate, see apiserver/features.py).
GATE = "ManifestBasedAdmissionControlConfig"


class ManifestError(Exception):
    pass


def check_gate(gate_enabled: bool) -> None:
    """Refuse a manifest directory while the gate is off, as ValidateStaticManifestsDir does."""
    if not gate_enabled:
        raise ManifestError(f"--admission-manifests: Forbidden: --admission-manifests requires the {GATE} feature "
                            "gate to be enabled")


def is_static_name(name: str) -> bool:
    return name.endswith(SUFFIX)


def _gvk(doc: dict[str, Any]) -> str:
    api_version = doc.get("apiVersion", "")
    group, _, version = api_version.rpartition("/")
    return f"{group}/{version}, Kind={doc.get('kind', '')}"


def _documents(path: str) -> list[dict[str, Any]]:
    with open(path, "rb") as f:
        data = f.read()
    if not data.strip():
        return []
    try:
        docs = [d for d in yaml.safe_load_all(data) if d is not None]
    except yaml.YAMLError as err:
        raise ManifestError(f"failed to split YAML documents in file {path!r}: {err}") from None
    for doc in docs:
        if not isinstance(doc, dict):
            raise ManifestError(f"error loading {path}: Object 'Kind' is missing")
    return docs


def _check_names(kind: str, obj: dict[str, Any], path: str, seen: dict[str, dict[str, str]]) -> None:
    name = (obj.get("metadata") or {}).get("name") or ""
    if not name:
        raise ManifestError(f"error loading {path}: resource in file {path!r} must have a name")
    if not is_static_name(name):
        raise ManifestError(f"error loading {path}: {name!r} in file {path!r} must have a name ending with {SUFFIX!r}")
    previous = seen.setdefault(kind, {}).get(name)
    if previous is not None:
        raise ManifestError(f"error loading {path}: duplicate name {name!r} found in file {path!r} "
                            f"(previously seen in {previous!r})")
    seen[kind][name] = path
    spec = obj.get("spec") or {}
    if kind.endswith("Policy") and spec.get("paramKind") is not None:
        raise ManifestError(f"error loading {path}: {kind} {name!r}: spec.paramKind is not supported for static "
                            "manifests")
    if kind.endswith("Binding"):
        policy_name = spec.get("policyName") or ""
        if not policy_name:
            raise ManifestError(f"error loading {path}: binding {name!r} must reference a policy (spec.policyName)")
        if not is_static_name(policy_name):
            raise ManifestError(f"error loading {path}: binding {name!r}: spec.policyName {policy_name!r} must end "
                                f"with {SUFFIX!r}")
        if spec.get("paramRef") is not None:
            raise ManifestError(f"error loading {path}: binding {name!r}: spec.paramRef is not supported for static "
                                "manifests")


def load(directory: str, prepare: Callable[[dict[str, Any]], list[str]]) -> StaticPolicies:
    """The policies in `directory`; `prepare(obj)` defaults obj in place and returns its validation errors."""
    try:
        names = sorted(os.listdir(directory))
    except OSError as err:
        raise ManifestError(f"failed to read manifest directory {directory!r}: {err}") from None
    result = StaticPolicies()
    seen: dict[str, dict[str, str]] = {}
    for file_name in names:
        path = os.path.join(directory, file_name)
        if os.path.isdir(path) or os.path.splitext(file_name)[1].lower() not in _EXTENSIONS:
            continue
        for doc in _documents(path):
            is_list = doc.get("kind") == "List" and doc.get("apiVersion") == "v1"
            items = (doc.get("items") or []) if is_list else [doc]
            for item in items:
                kind = item.get("kind", "")
                if item.get("apiVersion") != API_VERSION or kind not in _KINDS:
                    where = "unsupported resource type {} in List" if is_list else "unsupported resource type {}"
                    raise ManifestError(f"error loading {path}: " + where.format(_gvk(item)))
                problems = prepare(item)
                name = (item.get("metadata") or {}).get("name", "")
                if problems:
                    joined = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
                    raise ManifestError(f"error loading {path}: {kind} {name!r}: {joined}")
                _check_names(kind, item, path, seen)
                getattr(result, _KINDS[kind]).append(item)
    for bindings, policies in ((result.validating_bindings, result.validating),
                               (result.mutating_bindings, result.mutating)):
        known = {p["metadata"]["name"] for p in policies}
        for binding in bindings:
            policy_name = binding["spec"]["policyName"]
            if policy_name not in known:
                raise ManifestError(f"binding {binding['metadata']['name']!r} references policy {policy_name!r} "
                                    "which does not exist in the manifest directory")
    return result
