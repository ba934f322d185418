"""Partitionable devices: counter sets in one slice, devices consuming them in others, and the
backtracking a choice that uses up counters forces."""

from __future__ import annotations

from typing import Any

import pytest

from tests.scheduler.dra.builders import allocated, claim, device, device_class, exact, picked, run, slice_

CLASSES = [device_class("gpu", "true"), device_class("big", 'device.attributes["gpu.example.com"].size == "big"'),
           device_class("small", 'device.attributes["gpu.example.com"].size == "small"')]


def uses(memory: str, size: str, name: str, **extra: Any) -> dict[str, Any]:
    return device(name, attrs={"size": size}, **extra,
                  consumesCounters=[{"counterSet": "gpu-0-counters", "counters": {"memory": {"value": memory}}}])


def pool(*devices: dict[str, Any], total: str = "4Gi") -> list[dict[str, Any]]:
    return [slice_("n1-counters", node="n1", pool="n1", count=2,
                   sharedCounters=[{"name": "gpu-0-counters", "counters": {"memory": {"value": total}}}]),
            slice_("n1-devices", list(devices), node="n1", pool="n1", count=2)]


WHOLE = uses("4Gi", "big", "gpu-0")
HALF_A, HALF_B, QUARTER = uses("2Gi", "small", "gpu-0-a"), uses("2Gi", "small", "gpu-0-b"), uses("1Gi", "small", "gpu-0-q")

CASES = [
    pytest.param(pool(WHOLE, HALF_A), [claim("c", exact("g", count=2))], {}, "cannot allocate all claims",
                 id="the whole device and a partition of it cannot both be taken"),
    pytest.param(pool(HALF_A, HALF_B), [claim("c", exact("g", count=2))], {},
                 [[("g", "n1/gpu-0-a"), ("g", "n1/gpu-0-b")]], id="two halves fit the counters together"),
    pytest.param(pool(WHOLE, HALF_A, HALF_B), [claim("c", exact("a")), claim("d", exact("b", "small"))], {},
                 [[("a", "n1/gpu-0-a")], [("b", "n1/gpu-0-b")]],
                 id="a first choice that leaves a later claim nothing is backed out"),
    pytest.param(pool(WHOLE, HALF_A), [claim("c", exact("g", "small"))], dict(held=[allocated("h", ("n1", "gpu-0"))]),
                 "cannot allocate all claims", id="an allocated device's counters are used up for the others"),
    pytest.param(pool(WHOLE, HALF_A, QUARTER), [claim("c", exact("g", "small", count=2))],
                 dict(held=[allocated("h", ("n1", "gpu-0-a"))]), "cannot allocate all claims",
                 id="what is left after an allocated partition bounds the rest"),
    pytest.param(pool(WHOLE, HALF_A, QUARTER), [claim("c", exact("g", "small"))],
                 dict(held=[allocated("h", ("n1", "gpu-0-a"))]), [[("g", "n1/gpu-0-q")]],
                 id="a partition that fits beside an allocated one is taken"),
    pytest.param(pool(WHOLE), [claim("c", exact("g"))], dict(features={"DRAPartitionableDevices": False}),
                 "cannot allocate all claims", id="devices consuming counters are not used with the gate off"),
    pytest.param(pool(uses("1Gi", "small", "shared", allowMultipleAllocations=True, capacity={"memory": "2Gi"}), HALF_A,
                      total="3Gi"),
                 [claim("a", exact("g", "small", capacity={"requests": {"memory": "1Gi"}})),
                  claim("b", exact("g", "small", capacity={"requests": {"memory": "1Gi"}})),
                  claim("c", exact("g", "small"))], {},
                 [[("g", "n1/shared")], [("g", "n1/shared")], [("g", "n1/gpu-0-a")]],
                 id="a shared device consumes its counters once however many shares it has"),
]


@pytest.mark.parametrize("slices, claims, kwargs, want", CASES)
def test_partitionable(slices: list[dict[str, Any]], claims: list[dict[str, Any]], kwargs: dict[str, Any], want: Any) -> None:
    assert picked(run(slices, claims, classes=CLASSES, **kwargs)) == want
