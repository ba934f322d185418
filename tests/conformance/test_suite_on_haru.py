"""CI: the whole conformance suite against a real `haru up`, and every check passes.

Runs `python -m conformance` as a user does (a subprocess with the cluster's kubeconfig,
`--parallel 4`: the checks wait on the cluster more than they compute, so 4 at once keep two
cores busy) and reads its JUnit XML; a failure prints each failed check with its message and the
exchanges that broke it. The self-tests' own checks (self_checks.py) must pass here too, or their
failing with a behaviour switched off would prove nothing.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from client import kubeconfig
from conformance import runner
from tests.conftest import ROOT, start_haru, stop_haru
from tests.conformance import self_checks

pytestmark = pytest.mark.slow


def test_haru_up_passes_every_check(tmp_path: Path) -> None:
    cluster = start_haru(str(tmp_path / "haru"))
    try:
        junit = tmp_path / "junit.xml"
        result = subprocess.run([sys.executable, "-m", "conformance", "--kubeconfig", cluster.kubeconfig,
                                 "--parallel", "4", "--junit", str(junit), "--results-dir", str(tmp_path / "results")],
                                cwd=ROOT, capture_output=True, text=True, timeout=600)
        suite = ET.parse(junit).getroot().find("testsuite")
        assert suite is not None
        failures = [(case.attrib["name"], (case.find("failure").text or "")[:3000])  # type: ignore[union-attr]
                    for case in suite.findall("testcase") if case.find("failure") is not None]
        assert not failures, "\n\n".join(f"FAILED {name}\n{detail}" for name, detail in failures)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        assert int(suite.attrib["tests"]) > 0 and suite.attrib["skipped"] == "0", \
            "a check skipped on a default haru up, where every gate is on"
        assert (tmp_path / "results" / "junit_01.xml").exists()
        assert "SUCCESS! -- " in (tmp_path / "results" / "e2e.log").read_text()
        own = asyncio.run(runner.run(self_checks.ALL, kubeconfig.load(cluster.kubeconfig)))
        assert [(r.outcome, r.message) for r in own] == [(runner.PASSED, "")] * len(own)
    finally:
        stop_haru(cluster)
