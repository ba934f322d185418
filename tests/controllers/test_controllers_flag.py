"""`--controllers` in kube-controller-manager's syntax: `*` all, `name` on, `-name` off."""

from __future__ import annotations

import pytest

from controllers import builtin


def test_star_minus_one_runs_every_controller_but_that_one() -> None:
    chosen = builtin.select("*,-deployment")
    assert "deployment" not in chosen and set(chosen) == set(builtin.NAMES) - {"deployment"}
    assert builtin.select("*") == builtin.NAMES


def test_names_alone_pick_only_those_in_start_order_and_accept_the_controller_suffix() -> None:
    assert builtin.select("job,namespace-controller") == ("namespace", "job")
    assert builtin.select("") == ()


def test_an_unknown_controller_is_refused() -> None:
    with pytest.raises(ValueError, match='"nope" is not in the list of known controllers'):
        builtin.select("*,-nope")
