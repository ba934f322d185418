"""The pod defaults that built-in admission plugins add on create, until issue #4's chain exists.

- ServiceAccount: `serviceAccountName` (and the deprecated `serviceAccount` mirror) default to
  "default". With the ServiceAccount admission plugin on (`haru up`), the plugin has already done
  it, checked the account and added the `kube-api-access-*` volume (admission/plugins/service_account.py).
- DefaultTolerationSeconds: NoExecute tolerations for node.kubernetes.io/not-ready and
  unreachable with tolerationSeconds 300, unless the pod already tolerates them.
- Priority: with no priorityClassName and no global default class, priority 0 and
  preemptionPolicy PreemptLowerPriority. Resolving a named class is the plugin's job (issue #4).
Called by `pod.py` on create only, as the plugins admit only CREATE.
"""

from __future__ import annotations

from typing import Any

_NOT_READY = "node.kubernetes.io/not-ready"
_UNREACHABLE = "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300


def service_account(spec: dict[str, Any]) -> None:
    # v1's deprecated serviceAccount fills serviceAccountName when only it is given (conversion).
    name = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
    spec["serviceAccountName"] = name
    spec["serviceAccount"] = name


def _tolerates(tolerations: list[dict[str, Any]], key: str) -> bool:
    return any(t.get("key") in (key, "", None) and t.get("effect") in ("NoExecute", "", None) for t in tolerations)


def default_tolerations(spec: dict[str, Any]) -> None:
    tolerations = list(spec.get("tolerations") or [])
    for key in (_NOT_READY, _UNREACHABLE):
        if not _tolerates(tolerations, key):
            tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                                "tolerationSeconds": DEFAULT_TOLERATION_SECONDS})
    spec["tolerations"] = tolerations


def priority(spec: dict[str, Any]) -> None:
    if spec.get("priorityClassName"):
        return
    spec.setdefault("priority", 0)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")


def admit_create(spec: dict[str, Any], meta: dict[str, Any]) -> None:
    # Mirror pods (static pods from a kubelet) are left alone by the ServiceAccount plugin.
    if "kubernetes.io/config.mirror" not in (meta.get("annotations") or {}):
        service_account(spec)
    default_tolerations(spec)
    priority(spec)
