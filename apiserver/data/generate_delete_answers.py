"""Writes `delete-answers-1.36.json`: what each built-in DELETE path answers, per the 1.36 OpenAPI.

The source is the `kubernetes==36.0.3` Python client, which is generated from kube-apiserver
v1.36's OpenAPI spec: every `*_api.py` method passes the path and method to `call_api` beside a
`response_types_map` copied from that path's responses. A 200 type other than `V1Status` means the
resource's registry store sets `ReturnDeletedObject`. The client's source is read with `ast`, not
imported. Run from the repository root with the test extras installed:
`python apiserver/data/generate_delete_answers.py`; `tests/apiserver/test_delete_answers.py` checks
the committed file against a fresh run. `apiserver/delete_answers.py` loads the result.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import json
import os
import sys
from typing import Any, Iterator

CLIENT = "kubernetes"
CLIENT_VERSION = "36.0.3"
OUTPUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "delete-answers-1.36.json")
STATUS_TYPE = "V1Status"


def _client_api_dir() -> str:
    spec = importlib.util.find_spec(CLIENT)
    if spec is None or spec.origin is None:
        raise SystemExit(f"{CLIENT}=={CLIENT_VERSION} is not installed (pip install -e '.[test]')")
    found = importlib.metadata.version(CLIENT)
    if found != CLIENT_VERSION:
        raise SystemExit(f"need {CLIENT}=={CLIENT_VERSION} (the 1.36 client), found {found}")
    return os.path.join(os.path.dirname(spec.origin), "client", "api")


def _delete_calls(source: str) -> Iterator[tuple[str, str]]:
    """(path, 200 response type) of every DELETE `call_api` in one generated module."""
    for func in ast.walk(ast.parse(source)):
        if not isinstance(func, ast.FunctionDef):
            continue
        response_types: dict[int, Any] = {}
        path = None
        for node in ast.walk(func):
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "response_types_map" for t in node.targets):
                response_types = ast.literal_eval(node.value)
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr == "call_api" and len(node.args) >= 2):
                method = ast.literal_eval(node.args[1])
                if method == "DELETE":
                    path = ast.literal_eval(node.args[0])
        if path is not None:
            yield path, response_types.get(200)


def _split(path: str) -> tuple[str, str, str, str] | None:
    """`/apis/g/v/namespaces/{namespace}/r/{name}` -> (g, v, r, "delete"|"deletecollection")."""
    parts = path.strip("/").split("/")
    if parts[0] == "api":
        group, rest = "", parts[1:]
    elif parts[0] == "apis":
        group, rest = parts[1], parts[2:]
    else:
        return None
    if "{group}" in parts:
        return None  # the custom-objects API: any CRD's path, not a built-in store
    version, rest = rest[0], rest[1:]
    if len(rest) > 2 and rest[:2] == ["namespaces", "{namespace}"]:
        rest = rest[2:]
    if len(rest) == 1:
        return group, version, rest[0], "deletecollection"
    if len(rest) == 2 and rest[1] == "{name}":
        return group, version, rest[0], "delete"
    return None  # a subresource (only connect proxies answer DELETE there)


def build(api_dir: str) -> dict[str, Any]:
    answers: dict[str, dict[str, str]] = {"delete": {}, "deletecollection": {}}
    for filename in sorted(os.listdir(api_dir)):
        if not filename.endswith("_api.py"):
            continue
        with open(os.path.join(api_dir, filename), encoding="utf-8") as fh:
            source = fh.read()
        for path, answer in _delete_calls(source):
            split = _split(path)
            if split is None or answer is None:
                continue
            group, version, resource, action = split
            key = f"{group}/{version}/{resource}" if group else f"{version}/{resource}"
            # The client's model name: V1Status, or the object's (V1DeviceClass, ResourceV1ResourceClaim).
            previous = answers[action].setdefault(key, answer)
            if previous != answer:
                raise SystemExit(f"{action} {key}: {previous} and {answer} in the same client")
    return {
        "source": f"{CLIENT}=={CLIENT_VERSION} client/api/*_api.py (generated from the kube-apiserver "
                  "v1.36 OpenAPI): the 200 response type of each built-in DELETE path",
        "generator": "apiserver/data/generate_delete_answers.py",
        "delete": dict(sorted(answers["delete"].items())),
        "deletecollection": dict(sorted(answers["deletecollection"].items())),
    }


def render(table: dict[str, Any]) -> str:
    return json.dumps(table, indent=1, sort_keys=False) + "\n"


def main() -> None:
    text = render(build(_client_api_dir()))
    with open(OUTPUT, "w", encoding="utf-8") as fh:
        fh.write(text)
    print(f"wrote {OUTPUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
