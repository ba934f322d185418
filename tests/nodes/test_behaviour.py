"""nodes/runtime/behaviour.py: command lines become steps through the behaviours table."""

from __future__ import annotations

import pytest

from nodes.runtime import behaviour


def _plan(command=None, args=None, annotations=None, name="c"):
    container = {"name": name}
    if command is not None:
        container["command"] = command
    if args is not None:
        container["args"] = args
    return [(s.kind, s.value) for s in behaviour.plan(container, annotations)]


@pytest.mark.parametrize("command, args, expected", [
    (["sleep", "1"], None, [("wait", 1.0)]),
    (["/bin/sleep", "2.5"], None, [("wait", 2.5)]),
    (None, ["sleep", "3"], [("wait", 3.0)]),
    (["sh", "-c", "exit 3"], None, [("exit", 3)]),
    (["false"], None, [("exit", 1)]),
    (["true"], None, [("exit", 0)]),
    (["sh", "-c", "echo hello world; sleep 1 && exit 2"], None, [("print", "hello world"), ("wait", 1.0), ("exit", 2)]),
    (["nginx", "-g", "daemon off;"], None, [("forever", None)]),
    (None, None, [("forever", None)]),
    (["sleep", "infinity"], None, [("forever", None)]),
    (["sh", "-c", "exit 3; echo never"], None, [("exit", 3)]),
])
def test_command_lines_become_steps(command, args, expected) -> None:
    assert _plan(command, args) == expected


def test_the_annotation_overrides_the_containers_command() -> None:
    annotations = {"behavior.haru.dev/web": "sleep 2; exit 7"}
    assert _plan(["nginx"], annotations=annotations, name="web") == [("wait", 2.0), ("exit", 7)]
    assert _plan(["nginx"], annotations=annotations, name="other") == [("forever", None)]


def test_every_rule_in_the_table_compiles() -> None:
    names = [r.name for r in behaviour.compile_rules()]
    assert names[-1] == "anything-else" and {"sleep", "exit", "true", "false"} <= set(names)
