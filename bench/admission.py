"""`python -m bench.admission`: pod creation with admission policies beside the same run without them.

Issue #4's benchmark. Two API servers run as child processes (`bench._apiserver_child`, the
server alone): one without policies, one with 1 MutatingAdmissionPolicy (hostUsers: false for
namespaces labelled multi-tenant, ApplyConfiguration) and 3 ValidatingAdmissionPolicies (limits
on every container, no `:latest` images, an `app` label), all bound. wrk creates ~2.2 KB pods
with 32 connections against each, in alternating rounds; the row compares throughput (target:
with policies ≥ 75% of without). Then, in this process and in the same run, every expression of
those policies is timed per evaluation on a converted request (haru's `Program.evaluate` on an
Activation) beside the same expression in cel-python where cel-python can run it (target: haru
median ≤ 20 µs per rule). Prints one table; PASS/FAIL per target.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import aiohttp

from admission import cel
from admission.policy import expressions
from bench import _http_cases
from bench._api_seed import running_pod
from bench._server_process import ServerProcess

THROUGHPUT_TARGET = 0.75
RULE_TARGET_US = 20.0
NAMESPACE = "tenant-a"
_A = "/apis/admissionregistration.k8s.io/v1"
_POD_RULE = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["pods"]}

VALIDATIONS = {
    "require-limits": "object.spec.containers.all(c, has(c.resources) && has(c.resources.limits))",
    "no-latest-images": "object.spec.containers.all(c, !c.image.endsWith(':latest'))",
    "require-app-label": "has(object.metadata.labels) && 'app' in object.metadata.labels",
}
MUTATION = "Object{spec: Object.spec{hostUsers: false}}"


def policies() -> list[tuple[str, dict[str, Any]]]:
    """(collection path, object) for the 4 policies and their bindings, in creation order."""
    objects: list[tuple[str, dict[str, Any]]] = []
    for name, expression in VALIDATIONS.items():
        objects.append((f"{_A}/validatingadmissionpolicies", {
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": {"matchConstraints": {"resourceRules": [_POD_RULE]},
                     "validations": [{"expression": expression, "message": f"{name} failed"}]}}))
        objects.append((f"{_A}/validatingadmissionpolicybindings", {
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name}, "spec": {"policyName": name, "validationActions": ["Deny"]}}))
    objects.append((f"{_A}/mutatingadmissionpolicies", {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": "user-namespaces"},
        "spec": {"matchConstraints": {"resourceRules": [{**_POD_RULE, "operations": ["CREATE"]}],
                                      "namespaceSelector": {"matchLabels": {"multi-tenant": "true"}}},
                 "reinvocationPolicy": "Never",
                 "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": MUTATION}}]}}))
    objects.append((f"{_A}/mutatingadmissionpolicybindings", {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicyBinding",
        "metadata": {"name": "user-namespaces"}, "spec": {"policyName": "user-namespaces"}}))
    return objects


async def _post(session: aiohttp.ClientSession, url: str, body: dict[str, Any]) -> None:
    async with session.post(url, json=body) as resp:
        if resp.status != 201:
            raise RuntimeError(f"POST {url} answered {resp.status}: {(await resp.read())[:500]!r}")


def _namespace(round_index: int) -> str:
    return f"{NAMESPACE}-{round_index}"  # one per round: wrk's pod names restart at 1 every round


async def prepare(server: ServerProcess, *, with_policies: bool, rounds: int) -> None:
    async with aiohttp.ClientSession() as session:
        for index in range(rounds):
            await _post(session, f"{server.url}/api/v1/namespaces",
                        {"metadata": {"name": _namespace(index), "labels": {"multi-tenant": "true"}}})
        if with_policies:
            for path, obj in policies():
                await _post(session, server.url + path, obj)
            # The policies apply: a pod comes back with hostUsers false.
            pod = running_pod(0, 0)
            pod.pop("status")
            pod["metadata"] = {"name": "probe", "labels": {"app": "probe"}}
            pod["spec"].pop("nodeName")
            async with session.post(f"{server.url}/api/v1/namespaces/{_namespace(0)}/pods", json=pod) as resp:
                created = await resp.json()
                if resp.status != 201 or created["spec"].get("hostUsers") is not False:
                    raise RuntimeError(f"the policies did not apply: {resp.status} {created}")


async def measure_throughput(rounds: int, seconds: float, connections: int) -> tuple[list[float], list[float], str]:
    with tempfile.TemporaryDirectory(prefix="haru-bench-admission-") as tmp:
        plain = await ServerProcess.start_apiserver(Path(tmp) / "plain")
        governed = await ServerProcess.start_apiserver(Path(tmp) / "policies")
        try:
            await prepare(plain, with_policies=False, rounds=rounds)
            await prepare(governed, with_policies=True, rounds=rounds)
            without: list[float] = []
            with_: list[float] = []
            tool = ""
            for index in range(rounds):  # alternate, so both sides see the same machine load
                for server, results in ((plain, without), (governed, with_)):
                    created = await _http_cases.measure_creates(
                        server.url, _namespace(index), connections=connections, seconds=seconds, use_wrk=True,
                        server_cpu=server.cpu_seconds)
                    if created.load.errors:
                        raise RuntimeError(f"{created.load.errors} creates failed against {server.name}")
                    results.append(created.per_second)
                    tool = created.load.tool
            return without, with_, tool
        finally:
            await plain.stop()
            await governed.stop()


# -- per-rule CEL evaluation, haru beside cel-python ------------------------------------------------

def _pod() -> dict[str, Any]:
    pod = running_pod(0, 7)
    pod.pop("status")
    return pod


def _time_us(call: Callable[[], Any], loops: int) -> list[float]:
    samples = []
    for _ in range(loops):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1e6)
    return samples


def measure_rules(loops: int, rounds: int) -> list[tuple[str, str, float, float | None, str]]:
    """(rule, expression, haru median µs, cel-python median µs or None, why not) per expression."""
    import celpy

    pod = _pod()
    rows = []
    cases = [(f"VAP {name}", text, expressions.BOOL, False) for name, text in VALIDATIONS.items()]
    cases.append(("MAP user-namespaces (Object{} literal)", MUTATION, expressions.OBJECT, True))
    celpy_env = celpy.Environment()
    for label, text, expected, construction in cases:
        compiled = expressions.compile_expression(text, expected=expected, params=False, construction=construction)
        assert compiled.program is not None, compiled.error
        program = compiled.program
        activation = program.env.activation({"object": pod, "oldObject": None, "request": {}, "variables": {},
                                             "namespaceObject": None,
                                             "authorizer": cel.authorizer_for("kubernetes-admin")})
        haru = lambda: program.evaluate(activation, remember=False)  # noqa: E731 - one closure per case
        celpy_run = None
        note = ""
        if construction:
            note = "no Object{} construction"
        else:
            celpy_program = celpy_env.program(celpy_env.compile(text))
            celpy_activation = {"object": celpy.json_to_cel(pod)}
            celpy_run = lambda: celpy_program.evaluate(celpy_activation)  # noqa: E731
        haru_samples: list[float] = []
        celpy_samples: list[float] = []
        for _ in range(rounds):
            haru_samples += _time_us(haru, loops)
            if celpy_run is not None:
                celpy_samples += _time_us(celpy_run, max(1, loops // 10))
        rows.append((label, text, statistics.median(haru_samples),
                     statistics.median(celpy_samples) if celpy_samples else None, note))
    return rows


def _table(rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for i, row in enumerate(rows):
        print("| " + " | ".join(cell.ljust(widths[j]) for j, cell in enumerate(row)) + " |")
        if i == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")


def report(without: list[float], with_: list[float], tool: str, connections: int,
           rules: list[tuple[str, str, float, float | None, str]]) -> bool:
    import importlib.metadata as md

    print("# Admission: pod creation with 1 MAP + 3 VAPs bound, beside no policies; per-rule CEL")
    print(f"# {platform.python_implementation()} {platform.python_version()} on {platform.machine()}, "
          f"load by {tool} ({connections} connections), cel-expr-python {md.version('cel-expr-python')}, "
          f"cel-python {md.version('cel-python')}")
    base, governed = statistics.median(without), statistics.median(with_)
    ratio = governed / base if base else 0.0
    passed = ratio >= THROUGHPUT_TARGET
    table = [["case", "haru", "anchor", "ratio", "target", "result"],
             ["create pods/s, 1 MAP + 3 VAPs (anchor: same run, no policies)", f"{governed:,.0f}",
              f"{base:,.0f}", f"{ratio:.0%}", f"≥ {THROUGHPUT_TARGET:.0%}", "PASS" if passed else "FAIL"]]
    for label, _, haru, celpy_median, note in rules:
        ok = haru <= RULE_TARGET_US
        passed &= ok
        anchor = f"{celpy_median:.1f} µs (cel-python)" if celpy_median is not None else f"n/a ({note})"
        speed = f"{celpy_median / haru:.1f}x faster" if celpy_median is not None else "-"
        table.append([f"CEL {label}, median per evaluation", f"{haru:.1f} µs", anchor, speed,
                      f"≤ {RULE_TARGET_US:.0f} µs", "PASS" if ok else "FAIL"])
    _table(table)
    print()
    print("  rounds (pods/s): without " + ", ".join(f"{x:,.0f}" for x in without)
          + "; with " + ", ".join(f"{x:,.0f}" for x in with_))
    for label, text, *_ in rules:
        print(f"  {label}: `{text}`")
    return passed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short rounds (smoke test)")
    args = parser.parse_args(argv)
    rounds, seconds, loops = (1, 1.0, 100) if args.quick else (3, 5.0, 2000)
    connections = 32
    without, with_, tool = asyncio.run(measure_throughput(rounds, seconds, connections))
    rules = measure_rules(loops, rounds)
    report(without, with_, tool, connections, rules)
    return 0


if __name__ == "__main__":
    sys.exit(main())
