"""`haru up -f cluster.yaml`: read a cluster file into `pools.Pool`s, refusing a malformed one with
the line and the field that is wrong.

The file is composed with PyYAML's node API (not `safe_load`), so every value keeps its start mark
and an error names `path:line: field: what is wrong`, e.g.
`cluster.yaml:7: pools[1].count: must be a whole number ≥ 0, got "two"`. The shape:

    kind: Cluster                     # optional; apiVersion haru.dev/v1alpha1 optional too
    gracePeriodScale: 0.01            # optional: how pod grace periods are scaled (see kubelet/)
    pools:
    - {name, count, cpu, memory, pods, ephemeralStorage, instanceType, region,
       labels: {k: v}, taints: [{key, value, effect}], zones: [..], racks: [..], devices: {...}}

`devices` is handed as-is to the DRA driver, after the driver's own parser has had its say
(`kubelet/devices_seam.check_devices`: its errors get the line too). Called through `flags.py` by
`cluster/cli.py` and `nodes/__main__.py`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

from nodes import pools
from nodes.kubelet import devices_seam

_QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$")
_LABEL_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_POOL_FIELDS = {"name", "count", "cpu", "memory", "pods", "ephemeralStorage", "instanceType", "region", "labels",
                "taints", "zones", "racks", "devices", "usernsBlocks"}
_TOP_FIELDS = {"apiVersion", "kind", "gracePeriodScale", "pools"}


class ClusterFileError(ValueError):
    pass


@dataclass(frozen=True)
class ClusterFile:
    pools: list[pools.Pool]
    grace_period_scale: float | None = None


class _Reader:
    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, node: yaml.Node, field: str, message: str) -> ClusterFileError:
        return ClusterFileError(f"{self.path}:{node.start_mark.line + 1}: {field}: {message}")

    def mapping(self, node: yaml.Node, field: str, allowed: set[str] | None = None) -> dict[str, tuple[yaml.Node, yaml.Node]]:
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, field, f"must be a mapping, got {_describe(node)}")
        out: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                raise self.fail(key, field, "keys must be strings")
            name = str(key.value)
            where = f"{field}.{name}" if field else name
            if name in out:
                raise self.fail(key, where, "appears twice")
            if allowed is not None and name not in allowed:
                raise self.fail(key, where, f"unknown field (known: {', '.join(sorted(allowed))})")
            out[name] = (key, value)
        return out

    def sequence(self, node: yaml.Node, field: str) -> list[yaml.Node]:
        if not isinstance(node, yaml.SequenceNode):
            raise self.fail(node, field, f"must be a list, got {_describe(node)}")
        return list(node.value)

    def string(self, node: yaml.Node, field: str) -> str:
        if not isinstance(node, yaml.ScalarNode) or node.tag == "tag:yaml.org,2002:null":
            raise self.fail(node, field, f"must be a string, got {_describe(node)}")
        return str(node.value)

    def count(self, node: yaml.Node, field: str, minimum: int = 0) -> int:
        value = self.string(node, field) if isinstance(node, yaml.ScalarNode) else None
        if value is None or not re.fullmatch(r"[0-9]+", value) or int(value) < minimum:
            raise self.fail(node, field, f"must be a whole number ≥ {minimum}, got {_describe(node)}")
        return int(value)

    def quantity(self, node: yaml.Node, field: str) -> str:
        value = self.string(node, field)
        if not _QUANTITY.match(value):
            raise self.fail(node, field, f'must be a quantity such as "16", "500m" or "64Gi", got "{value}"')
        return value

    def plain(self, node: yaml.Node) -> Any:
        return yaml.safe_load(yaml.serialize(node))


def _describe(node: yaml.Node) -> str:
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    if node.tag == "tag:yaml.org,2002:null":
        return "nothing"
    return f'"{node.value}"'


def parse(text: str, path: str = "cluster.yaml") -> ClusterFile:
    try:
        root = yaml.compose(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 0
        raise ClusterFileError(f"{path}:{line}: not valid YAML: {exc.problem or exc}") from None
    reader = _Reader(path)
    if root is None:
        raise ClusterFileError(f"{path}:1: pools: the file is empty; it needs at least one pool")
    top = reader.mapping(root, "", _TOP_FIELDS)
    if "kind" in top and reader.string(top["kind"][1], "kind") != "Cluster":
        raise reader.fail(top["kind"][1], "kind", f'must be "Cluster", got {_describe(top["kind"][1])}')
    scale = None
    if "gracePeriodScale" in top:
        node = top["gracePeriodScale"][1]
        try:
            scale = float(reader.string(node, "gracePeriodScale"))
        except ValueError:
            scale = -1.0
        if not scale >= 0:
            raise reader.fail(node, "gracePeriodScale", f"must be a number ≥ 0, got {_describe(node)}")
    if "pools" not in top:
        raise reader.fail(root, "pools", "is required")
    key, value = top["pools"]
    items = reader.sequence(value, "pools")
    if not items:
        raise reader.fail(value, "pools", "needs at least one pool")
    out: list[pools.Pool] = []
    names: set[str] = set()
    for i, item in enumerate(items):
        pool = _pool(reader, item, f"pools[{i}]")
        if pool.name in names:
            raise reader.fail(item, f"pools[{i}].name", f'"{pool.name}" is used by an earlier pool')
        names.add(pool.name)
        out.append(pool)
    try:
        pools.expand(out)
    except ValueError as exc:
        raise reader.fail(value, "pools", str(exc)) from None
    return ClusterFile(out, scale)


def _pool(reader: _Reader, node: yaml.Node, field: str) -> pools.Pool:
    fields = reader.mapping(node, field, _POOL_FIELDS)
    if "name" not in fields:
        raise reader.fail(node, f"{field}.name", "is required")
    if "count" not in fields:
        raise reader.fail(node, f"{field}.count", "is required")
    name = reader.string(fields["name"][1], f"{field}.name")
    if not _DNS_LABEL.match(name) or len(name) > 50:
        raise reader.fail(fields["name"][1], f"{field}.name",
                          f'"{name}" must be a lowercase DNS label of at most 50 characters (node names are <name>-<i>)')
    kwargs: dict[str, Any] = {"name": name, "count": reader.count(fields["count"][1], f"{field}.count")}
    for key, attr in (("cpu", "cpu"), ("memory", "memory"), ("ephemeralStorage", "ephemeral_storage")):
        if key in fields:
            kwargs[attr] = reader.quantity(fields[key][1], f"{field}.{key}")
    if "pods" in fields:
        kwargs["pods"] = reader.count(fields["pods"][1], f"{field}.pods", minimum=1)
    if "usernsBlocks" in fields:
        kwargs["userns_blocks"] = reader.count(fields["usernsBlocks"][1], f"{field}.usernsBlocks", minimum=1)
    for key, attr in (("instanceType", "instance_type"), ("region", "region")):
        if key in fields:
            kwargs[attr] = reader.string(fields[key][1], f"{field}.{key}")
    if "labels" in fields:
        labels = {}
        for label, (knode, vnode) in reader.mapping(fields["labels"][1], f"{field}.labels").items():
            value = reader.string(vnode, f"{field}.labels.{label}")
            _check_label(reader, knode, vnode, f"{field}.labels.{label}", label, value)
            labels[label] = value
        kwargs["labels"] = labels
    if "taints" in fields:
        kwargs["taints"] = tuple(_taint(reader, t, f"{field}.taints[{j}]")
                                 for j, t in enumerate(reader.sequence(fields["taints"][1], f"{field}.taints")))
    for key in ("zones", "racks"):
        if key in fields:
            names = [reader.string(n, f"{field}.{key}[{j}]") for j, n in enumerate(reader.sequence(fields[key][1], f"{field}.{key}"))]
            if not names:
                raise reader.fail(fields[key][1], f"{field}.{key}", "needs at least one name")
            for j, (n, value) in enumerate(zip(fields[key][1].value, names)):
                _check_label(reader, n, n, f"{field}.{key}[{j}]", "", value)
            kwargs[key] = tuple(names)
    if "devices" in fields:
        node = fields["devices"][1]
        reader.mapping(node, f"{field}.devices")
        kwargs["devices"] = reader.plain(node)
        problems = devices_seam.check_devices(kwargs["devices"])
        if problems:
            path, message = problems[0]
            at, where = _find(node, path), f"{field}.devices"
            for part in path:
                where += f"[{part}]" if isinstance(part, int) else f".{part}"
            raise reader.fail(at, where, message)
    return pools.Pool(**kwargs)


def _find(node: yaml.Node, path: tuple[str | int, ...]) -> yaml.Node:
    """The deepest YAML node along `path` (a key's own node for a key that is there), for its line."""
    for depth, part in enumerate(path):
        if isinstance(node, yaml.MappingNode):
            match = next(((k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == str(part)), None)
            if match is None:
                return node
            node = match[0] if depth == len(path) - 1 else match[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            return node
    return node


def _check_label(reader: _Reader, knode: yaml.Node, vnode: yaml.Node, field: str, key: str, value: str) -> None:
    if key:
        prefix, _, name = key.rpartition("/")
        if not _LABEL_NAME.match(name) or len(name) > 63 or (prefix and len(prefix) > 253):
            raise reader.fail(knode, field, f'"{key}" is not a valid label key')
    if value and (not _LABEL_NAME.match(value) or len(value) > 63):
        raise reader.fail(vnode, field, f'"{value}" is not a valid label value (63 characters of [A-Za-z0-9-_.])')


def _taint(reader: _Reader, node: yaml.Node, field: str) -> dict[str, str]:
    fields = reader.mapping(node, field, {"key", "value", "effect"})
    if "key" not in fields:
        raise reader.fail(node, f"{field}.key", "is required")
    if "effect" not in fields:
        raise reader.fail(node, f"{field}.effect", "is required")
    taint = {"key": reader.string(fields["key"][1], f"{field}.key")}
    if "value" in fields:
        taint["value"] = reader.string(fields["value"][1], f"{field}.value")
    effect = reader.string(fields["effect"][1], f"{field}.effect")
    if effect not in pools.TAINT_EFFECTS:
        raise reader.fail(fields["effect"][1], f"{field}.effect",
                          f'must be one of {", ".join(pools.TAINT_EFFECTS)}, got "{effect}"')
    taint["effect"] = effect
    return taint


def load(path: str) -> ClusterFile:
    try:
        with open(path) as f:
            text = f.read()
    except OSError as exc:
        raise ClusterFileError(f"{path}: {exc.strerror}") from None
    return parse(text, path)
