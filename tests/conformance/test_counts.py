"""Issue #15's sizes: at least 150 upstream conformance behaviours and 60 feature checks, every
upstream one named by a codename as conformance.yaml spells it, every feature one with its KEP.
That they all pass on haru is `test_suite_on_haru.py`."""

from __future__ import annotations

from conformance import registry


def test_the_suite_has_150_upstream_behaviours_named_as_upstream() -> None:
    upstream = [c for c in registry.all_checks() if c.kind == registry.CONFORMANCE]
    assert len(upstream) >= 150, f"only {len(upstream)} upstream behaviours"
    for check in upstream:
        assert check.name.startswith("[sig-") and check.name.endswith("[Conformance]"), check.name
        assert "  " not in check.name and "\n" not in check.name, check.name


def test_the_suite_has_60_feature_checks_each_with_its_kep() -> None:
    features = [c for c in registry.all_checks() if c.kind == registry.FEATURE]
    assert len(features) >= 60, f"only {len(features)} feature checks"
    for check in features:
        assert check.name.startswith("[Feature:") and check.kep.startswith("KEP-"), (check.name, check.kep)
