"""The README's table of conformance checks by area and kind is the registry's, and `haru
conformance` is reachable the ways the README says (`haru conformance`, `python -m conformance`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conformance import registry, summary

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_table_matches_the_registry() -> None:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Conformance: `haru conformance`", 1)[1].split("\n## ", 1)[0]
    want = summary.registry_markdown(registry.all_checks())
    assert want in section, f"README.md's conformance table is out of date; paste this one in its place:\n\n{want}\n"


def test_haru_conformance_lists_the_checks_with_the_same_table() -> None:
    for command in ([sys.executable, "-m", "cluster.cli", "conformance", "--list"],
                    [sys.executable, "-m", "conformance", "--list"]):
        result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        assert result.stdout.rstrip().endswith(summary.registry_markdown(registry.all_checks()))
        assert "conformance apps" in result.stdout


def test_a_bad_focus_or_kubeconfig_is_refused_with_a_message(tmp_path: Path) -> None:
    bad_regex = subprocess.run([sys.executable, "-m", "conformance", "--focus", "("], cwd=ROOT, capture_output=True,
                               text=True, timeout=60)
    assert bad_regex.returncode == 2 and "bad regular expression" in bad_regex.stderr
    missing = subprocess.run([sys.executable, "-m", "conformance", "--kubeconfig", str(tmp_path / "none")], cwd=ROOT,
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "cannot use kubeconfig" in missing.stderr
