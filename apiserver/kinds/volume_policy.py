"""Volume types the 1.36 API server no longer admits: `gitRepo` (KEP-5040).

The GitRepoVolumeDriver gate is locked off in 1.36 (`features.py`), so no node could mount such a
volume; haru refuses it where it is written instead of letting the pod fail on its node. Tightened
rules ratchet: a volume of the same name that already was gitRepo in the stored object is let
through, so stored objects stay updatable and deletable. Called by `pod.py` (pods) and
`podspec_validation.template()` (pod templates); the shape of a volume is checked in
`podspec_validation.volumes()`.
"""

from __future__ import annotations

from typing import Any

from apiserver import validation as v

Obj = dict[str, Any]
Causes = list[dict[str, str]]

GIT_REPO_DISABLED = (
    "gitRepo volumes are disabled (the GitRepoVolumeDriver feature gate is off since v1.33 and locked off in "
    "v1.36, KEP-5040); use an emptyDir volume populated by an init container that clones the repository instead"
)


def _git_repo_names(volumes: Any) -> set[str]:
    return {vol.get("name") or "" for vol in volumes or [] if isinstance(vol, dict) and vol.get("gitRepo") is not None}


def git_repo(spec: Obj, path: str, old_spec: Obj | None = None) -> Causes:
    """One Forbidden cause per gitRepo volume of `spec` at `<path>.volumes[i].gitRepo`.

    `old_spec` is the stored object's pod spec on an update; its gitRepo volumes ratchet."""
    allowed = _git_repo_names((old_spec or {}).get("volumes"))
    causes: Causes = []
    for i, vol in enumerate(spec.get("volumes") or []):
        if isinstance(vol, dict) and vol.get("gitRepo") is not None and (vol.get("name") or "") not in allowed:
            causes.append(v.forbidden(f"{path}.volumes[{i}].gitRepo", GIT_REPO_DISABLED))
    return causes
