"""Quantities print as Go's Quantity.String() does: canonical number, the format it was written in."""

from __future__ import annotations

import pytest

from admission import quantities


@pytest.mark.parametrize("text, printed", [
    ("500m", "500m"), ("0.5", "500m"), ("1.5", "1500m"), ("2000m", "2"), ("2000", "2k"), ("1500", "1500"),
    ("1Gi", "1Gi"), ("1024Mi", "1Gi"), ("1.5Gi", "1536Mi"), ("512", "512"), ("100M", "100M"), ("1e3", "1e3"),
    (1, "1"), ("0", "0"), ("-1", "-1"),
])
def test_printing(text, printed):
    assert str(quantities.parse(text)) == printed


def test_sums_keep_the_left_format():
    assert str(quantities.parse("1Gi") + quantities.parse("512Mi")) == "1536Mi"
    assert str(quantities.parse("250m") + quantities.parse("1")) == "1250m"


def test_a_bad_quantity_raises_with_upstreams_text():
    with pytest.raises(ValueError, match="quantities must match the regular expression"):
        quantities.parse("lots")
