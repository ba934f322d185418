"""What a hollow kubelet keeps on disk across restarts, in the kubelet's own layout.

Under `<state-dir>/<node>/`: `boot_id` (the node's bootID survives a kubelet restart, as a real
one survives one without a reboot) and `pods/<uid>/userns`, the user-namespace mapping file the
kubelet's userns manager writes (`{"uidMappings": [...], "gidMappings": [...]}`). `kubelet.py`
reads them at start to re-derive the allocator; pod workers write and remove them; `all_userns`
reads every node's for `haru nodes userns`.
"""

from __future__ import annotations

import json
import os
import uuid
from typing import Any


class Checkpoint:
    def __init__(self, root: str, node: str) -> None:
        self.dir = os.path.join(root, node)
        os.makedirs(os.path.join(self.dir, "pods"), exist_ok=True)

    def boot_id(self) -> str:
        path = os.path.join(self.dir, "boot_id")
        try:
            with open(path) as f:
                return f.read().strip()
        except FileNotFoundError:
            value = str(uuid.uuid4())
            _write(path, value)
            return value

    def write_userns(self, pod_uid: str, mapping: dict[str, Any]) -> None:
        folder = os.path.join(self.dir, "pods", pod_uid)
        os.makedirs(folder, exist_ok=True)
        _write(os.path.join(folder, "userns"), json.dumps(mapping))

    def userns(self) -> dict[str, dict[str, Any]]:
        found = {}
        pods = os.path.join(self.dir, "pods")
        for uid in os.listdir(pods):
            try:
                with open(os.path.join(pods, uid, "userns")) as f:
                    found[uid] = json.load(f)
            except (FileNotFoundError, NotADirectoryError, json.JSONDecodeError):
                continue
        return found

    def remove(self, pod_uid: str) -> None:
        folder = os.path.join(self.dir, "pods", pod_uid)
        try:
            os.remove(os.path.join(folder, "userns"))
        except FileNotFoundError:
            pass
        try:
            os.rmdir(folder)
        except OSError:
            pass


def _write(path: str, text: str) -> None:
    partial = path + ".partial"
    with open(partial, "w") as f:
        f.write(text)
    os.replace(partial, path)


def all_userns(root: str) -> dict[str, dict[str, dict[str, Any]]]:
    """Every node's recorded mappings under a state dir, read only: {node: {pod uid: mapping}}."""
    found: dict[str, dict[str, dict[str, Any]]] = {}
    if not os.path.isdir(root):
        return found
    for node in sorted(os.listdir(root)):
        pods = os.path.join(root, node, "pods")
        if not os.path.isdir(pods):
            continue
        for uid in sorted(os.listdir(pods)):
            try:
                with open(os.path.join(pods, uid, "userns")) as f:
                    found.setdefault(node, {})[uid] = json.load(f)
            except (FileNotFoundError, NotADirectoryError, json.JSONDecodeError):
                continue
    return found
