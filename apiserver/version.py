"""The server's VersionInfo, the body of `GET /version`.

Owns what haru says it is: Kubernetes 1.36.3 (the API it serves), emulating 1.36 and compatible
with 1.35 as a 1.36 kube-apiserver reports, plus haru's own build facts where Go fills in its
own (commit, tree state, build date, toolchain). Every field the `kubernetes` Python client
requires is present. The lead's `/version` handler serves `info()` as JSON.
"""

from __future__ import annotations

import datetime
import functools
import os
import platform
import sys
from typing import Any

KUBERNETES_VERSION = "1.36.3"
MAJOR, MINOR, PATCH = KUBERNETES_VERSION.split(".")
# `+haru` is semver build metadata: kubectl's skew check and helm's kubeVersion constraints
# compare only 1.36.3, while people can still tell this server from a real one.
GIT_VERSION = f"v{KUBERNETES_VERSION}+haru"

_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}
_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@functools.cache
def info() -> dict[str, Any]:
    commit = _git_commit()
    return {
        "major": MAJOR,
        "minor": MINOR,
        "emulationMajor": MAJOR,
        "emulationMinor": MINOR,
        # A 1.36 server is compatible with one minor back (component-base's default).
        "minCompatibilityMajor": MAJOR,
        "minCompatibilityMinor": str(int(MINOR) - 1),
        "gitVersion": GIT_VERSION,
        "gitCommit": commit,
        # Unknown without running git; upstream leaves it empty for builds outside a git tree too.
        "gitTreeState": "",
        "buildDate": _build_date(),
        "goVersion": f"python{platform.python_version()}",
        "compiler": sys.implementation.name,
        "platform": f"{sys.platform}/{_ARCH.get(platform.machine().lower(), platform.machine().lower())}",
    }


def _git_commit() -> str:
    """haru's own commit when running from a checkout, read from .git without spawning git."""
    git_dir = os.path.join(_REPO_ROOT, ".git")
    try:
        with open(os.path.join(git_dir, "HEAD")) as f:
            head = f.read().strip()
        if not head.startswith("ref: "):
            return head
        ref = head[5:]
        ref_file = os.path.join(git_dir, ref)
        if os.path.exists(ref_file):
            with open(ref_file) as f:
                return f.read().strip()
        with open(os.path.join(git_dir, "packed-refs")) as f:
            for line in f:
                sha, _, name = line.strip().partition(" ")
                if name == ref:
                    return sha
    except OSError:
        pass
    return ""


def _build_date() -> str:
    # An interpreted project has no build step: report when this source tree was last written.
    mtime = os.path.getmtime(os.path.abspath(__file__))
    stamp = datetime.datetime.fromtimestamp(mtime, tz=datetime.timezone.utc).replace(microsecond=0)
    return stamp.strftime("%Y-%m-%dT%H:%M:%SZ")
