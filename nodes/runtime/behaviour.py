"""A container's behaviour as steps, compiled from `behaviours.yaml` (kwok's stages as data).

`compile_rules()` reads the table once; `plan(container, annotations)` turns a container's command
line (or the `behavior.haru.dev/<name>` annotation that overrides it) into `Step`s: wait, exit,
print or forever, each knowing what the process does on SIGTERM. `kubelet/pod_worker.py` runs the steps; nothing here touches the clock. The
table's own comments say how a command line is split and matched.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import yaml

ANNOTATION_PREFIX = "behavior.haru.dev/"
TABLE = os.path.join(os.path.dirname(__file__), "behaviours.yaml")
_SHELLS = {"sh", "bash", "ash", "dash", "/bin/sh", "/bin/bash", "/bin/ash", "/usr/bin/bash", "/bin/dash"}
_SPLIT = re.compile(r"\s*(?:;|&&|\n)\s*")


@dataclass(frozen=True)
class Step:
    kind: str  # "wait" | "exit" | "print" | "forever"
    value: Any = None  # seconds, exit code, text
    rule: str = ""
    on_term: int | None = None  # the exit code on SIGTERM; None: ignores it until killed


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: re.Pattern[str]
    do: dict[str, Any]
    on_term: int | None = None

    def step(self, match: re.Match[str]) -> Step:
        kind, template = next(iter(self.do.items()))
        groups = {k: (v or "") for k, v in match.groupdict().items()}
        value = str(template).format(**groups) if isinstance(template, str) else template
        if kind == "wait":
            return Step("wait", float(value), self.name, self.on_term)
        if kind == "exit":
            return Step("exit", int(value or 0) % 256, self.name, self.on_term)
        if kind == "print":
            return Step("print", value, self.name, self.on_term)
        if kind == "forever":
            return Step("forever", None, self.name, self.on_term)
        raise ValueError(f"{TABLE}: rule {self.name}: unknown action {kind!r}")


@lru_cache(maxsize=None)
def compile_rules(path: str = TABLE) -> tuple[Rule, ...]:
    with open(path) as f:
        doc = yaml.safe_load(f)
    rules = []
    for row in doc["rules"]:
        if not isinstance(row.get("do"), dict) or len(row["do"]) != 1:
            raise ValueError(f"{path}: rule {row.get('name')}: `do` needs exactly one action")
        on_term = (row.get("onTerm") or {}).get("exit")
        rules.append(Rule(row["name"], re.compile(row["match"]), row["do"], None if on_term is None else int(on_term)))
    return tuple(rules)


def command_line(container: dict[str, Any], annotations: dict[str, str] | None = None) -> str:
    """What the container runs, as one line; the annotation wins; `sh -c SCRIPT` becomes SCRIPT."""
    override = (annotations or {}).get(ANNOTATION_PREFIX + container.get("name", ""))
    if override is not None:
        return override.strip()
    argv = [str(a) for a in (container.get("command") or [])] + [str(a) for a in (container.get("args") or [])]
    if len(argv) >= 3 and argv[0] in _SHELLS and argv[1] in ("-c", "-ec", "-xc", "-exc"):
        return argv[2].strip()
    return " ".join(shlex.quote(a) if not a or " " in a else a for a in argv)


def plan(container: dict[str, Any], annotations: dict[str, str] | None = None,
         rules: tuple[Rule, ...] | None = None) -> list[Step]:
    """The steps a container runs; an empty command line (the image's entrypoint) keeps running."""
    rules = rules if rules is not None else compile_rules()
    line = command_line(container, annotations)
    steps: list[Step] = []
    for part in (p for p in _SPLIT.split(line) if p) if line else [""]:
        for rule in rules:
            match = rule.pattern.search(part)
            if match:
                step = rule.step(match)
                if step.kind == "print":
                    step = Step("print", _unquote(step.value), step.rule, step.on_term)
                steps.append(step)
                break
        if steps and steps[-1].kind in ("exit", "forever"):
            break  # nothing after an exit or a process that never ends runs
    return steps


def _unquote(text: str) -> str:
    try:
        return " ".join(shlex.split(text))
    except ValueError:
        return text
