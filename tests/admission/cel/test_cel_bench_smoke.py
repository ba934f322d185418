"""`python -m bench.cel --quick` runs end to end and prints both sides for every rule."""

from __future__ import annotations

import pytest

from bench import cel as cel_bench


def test_the_cel_benchmark_prints_haru_beside_cel_python(capsys):
    pytest.importorskip("celpy")
    assert cel_bench.main(["--quick"]) == 0
    out = capsys.readouterr().out
    for rule in cel_bench.RULES:
        assert f"| {rule.name}" in out
    assert "request: activation + 3 Pod VAP rules" in out
    assert "n/a (no .? syntax)" in out


def test_both_engines_agree_on_every_rule_they_both_run():
    pytest.importorskip("celpy")
    for rule, _, _, haru_result, celpy_result in cel_bench.measure(loops=1, rounds=1):
        if not rule.celpy_note:
            assert bool(haru_result) == bool(celpy_result), rule.name
