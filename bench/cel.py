"""`python -m bench.cel`: per-rule CEL evaluation in haru beside cel-python, same rules, same run.

For a handful of typical rules (ValidatingAdmissionPolicy checks on a 2 KB Pod, a CRD rule on
`self`, a DRA device selector, a quantity comparison, optional chaining, a
MutatingAdmissionPolicy Object{} literal) it times one rule's evaluation on a request whose
variables were converted once, as admission does for all the rules of one request (haru:
`Program.evaluate(activation)`; cel-python: `evaluate` on `json_to_cel` output). Two more rows
time the per-request conversion of the Pod and a whole request (convert, then the three Pod
VAP rules). Sides are interleaved in rounds. Prints case | haru median | cel-python median |
ratio | target (per-rule haru median ≤ 20 µs) | PASS/FAIL; cel-python gaps show "n/a" and why.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

from admission import cel

TARGET_US = 20.0

POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {
        "name": "web-7d4b9c6f5-x2k8p", "namespace": "shop", "uid": "3f1c0b9e-0d3a-4a57-9b1e-2f6d8c1a4e77",
        "labels": {"app": "web", "tier": "frontend", "pod-template-hash": "7d4b9c6f5"},
        "annotations": {"kubectl.kubernetes.io/default-container": "web"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d4b9c6f5",
                             "uid": "a1b2c3d4-0000-4000-8000-000000000001", "controller": True,
                             "blockOwnerDeletion": True}],
    },
    "spec": {
        "containers": [
            {"name": "web", "image": "registry.example.com/shop/web:1.4.2",
             "ports": [{"containerPort": 8080, "protocol": "TCP"}],
             "env": [{"name": "MODE", "value": "prod"}, {"name": "PORT", "value": "8080"}],
             "resources": {"requests": {"cpu": "250m", "memory": "256Mi"},
                           "limits": {"cpu": "1", "memory": "512Mi"}},
             "volumeMounts": [{"name": "config", "mountPath": "/etc/web"}]},
            {"name": "sidecar", "image": "registry.example.com/shop/proxy:2.0.0",
             "resources": {"requests": {"cpu": "50m", "memory": "64Mi"},
                           "limits": {"cpu": "200m", "memory": "128Mi"}}},
        ],
        "volumes": [{"name": "config", "configMap": {"name": "web-config"}}],
        "serviceAccountName": "web", "nodeName": "node-3", "restartPolicy": "Always",
    },
    "status": {"phase": "Running", "podIP": "10.244.3.17", "hostIP": "192.168.1.13"},
}
SCALER = {"minReplicas": 2, "replicas": 5, "maxReplicas": 10}
DEVICE = {"driver": "gpu.example.com",
          "attributes": {"gpu.example.com": {"model": "H100", "memory": 80}},
          "capacity": {"gpu.example.com": {"memory": "80Gi"}}}


@dataclass(frozen=True)
class Rule:
    name: str
    variable: str  # the one variable the rule reads
    value: dict[str, Any]
    expression: str
    celpy_note: str = ""  # why cel-python cannot run it, when it cannot


RULES = [
    Rule("VAP: every container has limits", "object", POD,
         "object.spec.containers.all(c, has(c.resources) && has(c.resources.limits))"),
    Rule("VAP: images from the registry", "object", POD,
         "object.spec.containers.all(c, c.image.startsWith('registry.example.com/'))"),
    Rule("VAP: required label present", "object", POD,
         "has(object.metadata.labels) && 'app' in object.metadata.labels"),
    Rule("CRD rule on self", "self", SCALER,
         "self.minReplicas <= self.replicas && self.replicas <= self.maxReplicas"),
    Rule("DRA device selector", "device", DEVICE,
         "device.driver == 'gpu.example.com' && device.attributes['gpu.example.com'].model == 'H100'"),
    Rule("VAP: memory limit under 1Gi (quantity)", "object", POD,
         "quantity(object.spec.containers[0].resources.limits.memory).compareTo(quantity('1Gi')) < 0",
         celpy_note="no quantity() library"),
    Rule("VAP: optional chaining", "object", POD,
         "object.?spec.?hostUsers.orValue(true) == true",
         celpy_note="no .? syntax"),
    Rule("MAP: Object{} literal", "object", POD,
         "Object{spec: Object.spec{hostUsers: false}}",
         celpy_note="no Object{} construction"),
]


def _time_us(call: Callable[[], Any], loops: int) -> list[float]:
    samples = []
    for _ in range(loops):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1e6)
    return samples


ENV = cel.Environment({"object": cel.DYN, "self": cel.DYN, "device": cel.DYN},
                      object_construction=True)
POD_RULES = [rule for rule in RULES if rule.name.startswith("VAP") and not rule.celpy_note]


def _haru_runner(rule: Rule) -> Callable[[], Any]:
    program = ENV.compile(rule.expression)
    activation = ENV.activation({rule.variable: rule.value})
    return lambda: program.evaluate(activation, remember=False)


def _celpy_runner(rule: Rule) -> Callable[[], Any] | None:
    if rule.celpy_note:
        return None
    import celpy  # imported here: the anchor is optional for the rest of haru

    env = celpy.Environment()
    program = env.program(env.compile(rule.expression))
    activation = {rule.variable: celpy.json_to_cel(rule.value)}
    return lambda: program.evaluate(activation)


def _request_runners() -> list[tuple[str, Callable[[], Any], Callable[[], Any]]]:
    import celpy

    programs = [ENV.compile(rule.expression) for rule in POD_RULES]
    celpy_env = celpy.Environment()
    celpy_programs = [celpy_env.program(celpy_env.compile(r.expression)) for r in POD_RULES]

    def haru_request() -> Any:
        activation = ENV.activation({"object": POD})
        return [program.evaluate(activation, remember=False) for program in programs]

    def celpy_request() -> Any:
        activation = {"object": celpy.json_to_cel(POD)}
        return [program.evaluate(activation) for program in celpy_programs]

    return [
        ("request: activation for the 2 KB Pod (converted lazily, by the first rule)",
         lambda: ENV.activation({"object": POD}),
         lambda: celpy.json_to_cel(POD)),
        (f"request: activation + {len(programs)} Pod VAP rules, conversion included", haru_request,
         celpy_request),
    ]


def measure_requests(loops: int, rounds: int) -> list[tuple[str, float, float]]:
    rows = []
    for name, haru, celpy_run in _request_runners():
        haru_samples: list[float] = []
        celpy_samples: list[float] = []
        for _ in range(rounds):
            haru_samples += _time_us(haru, loops)
            celpy_samples += _time_us(celpy_run, max(1, loops // 10))
        rows.append((name, statistics.median(haru_samples), statistics.median(celpy_samples)))
    return rows


def measure(loops: int, rounds: int) -> list[tuple[Rule, float, float | None, Any, Any]]:
    rows = []
    for rule in RULES:
        haru = _haru_runner(rule)
        celpy_run = _celpy_runner(rule)
        haru_result = haru()
        celpy_result = celpy_run() if celpy_run else None
        haru_samples: list[float] = []
        celpy_samples: list[float] = []
        for _ in range(rounds):  # interleaved, so both sides see the same machine load
            haru_samples += _time_us(haru, loops)
            if celpy_run:
                celpy_samples += _time_us(celpy_run, max(1, loops // 10))
        rows.append((rule, statistics.median(haru_samples),
                     statistics.median(celpy_samples) if celpy_samples else None,
                     haru_result, celpy_result))
    return rows


def report(rows: list[tuple[Rule, float, float | None, Any, Any]],
           requests: list[tuple[str, float, float]]) -> bool:
    import importlib.metadata as md

    print("# CEL: median µs per rule on converted variables, and per whole request")
    print(f"# {platform.python_implementation()} {platform.python_version()} on {platform.machine()}, "
          f"cel-expr-python {md.version('cel-expr-python')}, cel-python {md.version('cel-python')}")
    header = ["rule", "haru µs", "cel-python µs", "ratio", "target", "result"]
    table = [header]
    all_pass = True
    for rule, haru, celpy_median, _, _ in rows:
        passed = haru <= TARGET_US
        all_pass &= passed
        if celpy_median is None:
            celpy_text, ratio = f"n/a ({rule.celpy_note})", "-"
        else:
            celpy_text, ratio = f"{celpy_median:.1f}", f"{celpy_median / haru:.1f}x faster"
        table.append([rule.name, f"{haru:.1f}", celpy_text, ratio, f"≤ {TARGET_US:.0f} µs",
                      "PASS" if passed else "FAIL"])
    for name, haru, celpy_median in requests:
        table.append([name, f"{haru:.1f}", f"{celpy_median:.1f}",
                      f"{celpy_median / haru:.1f}x faster", "(context)", "-"])
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for i, row in enumerate(table):
        print("| " + " | ".join(cell.ljust(widths[j]) for j, cell in enumerate(row)) + " |")
        if i == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    print()
    for rule, _, _, haru_result, celpy_result in rows:
        shown = haru_result if not isinstance(haru_result, dict) else "{…}"
        print(f"  {rule.name}: `{rule.expression}` -> {shown}"
              + ("" if rule.celpy_note else f" (cel-python: {celpy_result})"))
    return all_pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few iterations (smoke test)")
    args = parser.parse_args(argv)
    loops, rounds = (50, 2) if args.quick else (2000, 5)
    report(measure(loops, rounds), measure_requests(max(1, loops // 4), rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
