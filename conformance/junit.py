"""A run as JUnit XML, the shape ginkgo's junit reporter writes and CI dashboards read.

One `<testsuites>` with one `<testsuite name="haru conformance">`; each check a `<testcase>` with
`classname` = its area and `name` = its name (its KEP and gates appended for a feature check).
A failure holds `<failure message=… type="failed">` with the traceback and the exchanges with the
API server that led to it; a skip holds `<skipped message=…>` with the reason. Called by `cli`
(`--junit FILE`, and `junit_01.xml` under `--results-dir`).
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET

from conformance import runner

SUITE = "haru conformance"


def render(results: list[runner.Result], seconds: float, *, started: float | None = None) -> bytes:
    failures = sum(r.outcome == runner.FAILED for r in results)
    skipped = sum(r.outcome == runner.SKIPPED for r in results)
    totals = {"tests": str(len(results)), "failures": str(failures), "errors": "0", "disabled": "0",
              "time": f"{seconds:.3f}"}
    root = ET.Element("testsuites", totals)
    suite = ET.SubElement(root, "testsuite", {
        "name": SUITE, **totals, "skipped": str(skipped),
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(started or time.time()))})
    for result in results:
        check = result.check
        case = ET.SubElement(suite, "testcase", {
            "name": f"{check.name} {check.tags}".strip(), "classname": check.area,
            "status": result.outcome, "time": f"{result.seconds:.3f}"})
        if result.outcome == runner.FAILED:
            failure = ET.SubElement(case, "failure", {"message": result.message, "type": "failed"})
            failure.text = _details(result)
        elif result.outcome == runner.SKIPPED:
            ET.SubElement(case, "skipped", {"message": result.message})
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def _details(result: runner.Result) -> str:
    parts = [result.message, "", result.trace.rstrip()]
    if result.exchanges:
        parts += ["", "The last exchanges with the API server:"] + result.exchanges
    return _printable("\n".join(parts))


def _printable(text: str) -> str:
    # XML 1.0 forbids most control characters; a response body could hold one.
    return "".join(ch if ch in "\n\t\r" or ord(ch) >= 0x20 else f"\\x{ord(ch):02x}" for ch in text)
