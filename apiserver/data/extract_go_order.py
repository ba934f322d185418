"""Regenerates `k8s-1.36-go-order.json`: each message's fields in Go struct order.

Go's encoding/json writes struct fields in declaration order; the protobuf table
(`k8s-1.36-protobuf.json`) lists them by field number, which follows the order fields were
added. go-to-protobuf writes `generated.proto` in Go declaration order, so the order of the
`= N;` lines there is the Go order. Only messages whose Go order differs from ascending numbers
are written. Not imported by haru; run by hand against bare clones of the upstream repositories:

    python apiserver/data/extract_go_order.py kubernetes/api=GITDIR@v0.36.3 ... > apiserver/data/k8s-1.36-go-order.json
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

_PACKAGE = re.compile(r"^package\s+([\w.]+)\s*;")
_MESSAGE = re.compile(r"^message\s+(\w+)\s*\{")
_FIELD = re.compile(r"^\s+(?:optional\s+|repeated\s+)?(?:map<[^>]+>|[\w.]+)\s+\w+\s*=\s*(\d+)\s*;")


def orders(text: str) -> dict[str, list[int]]:
    package, message, found = "", "", {}
    for line in text.splitlines():
        if m := _PACKAGE.match(line):
            package = m.group(1)
        elif m := _MESSAGE.match(line):
            message = f"{package}.{m.group(1)}"
            found[message] = []
        elif line.startswith("}"):
            message = ""
        elif message and (m := _FIELD.match(line)):
            found[message].append(int(m.group(1)))
    return found


def main(sources: list[str]) -> None:
    result: dict[str, list[int]] = {}
    names = []
    for source in sources:
        name, _, where = source.partition("=")
        git_dir, tag = where.rsplit("@", 1)
        names.append(f"{name}@{tag}")
        paths = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "--name-only", tag],
                               check=True, capture_output=True, text=True).stdout.split()
        for path in paths:
            if path.endswith("generated.proto") and "testapigroup" not in path:
                text = subprocess.run(["git", "--git-dir", git_dir, "show", f"{tag}:{path}"],
                                      check=True, capture_output=True, text=True).stdout
                for message, numbers in orders(text).items():
                    if numbers != sorted(numbers):
                        result[message] = numbers
    # One message a line, so a regeneration diffs by message.
    rows = ",\n".join(f"  {json.dumps(name)}: {json.dumps(numbers)}" for name, numbers in sorted(result.items()))
    sys.stdout.write(f'{{"sources": {json.dumps(names)},\n"order": {{\n{rows}\n}}}}\n')


if __name__ == "__main__":
    main(sys.argv[1:])
