"""Consumable capacity: shared devices, capacity requests rounded by requestPolicy, shareID and consumedCapacity."""

from __future__ import annotations

from typing import Any

import pytest

from tests.scheduler.dra.builders import DRIVER, allocated, claim, device, exact, picked, run, slice_

GI = 2**30


def shared(name: str = "gpu-0", **capacity: Any) -> dict[str, Any]:
    return device(name, allowMultipleAllocations=True, capacity=capacity)


def memory_policy(value: str, **policy: Any) -> dict[str, Any]:
    return {"value": value, "requestPolicy": policy}


STEPPED = memory_policy("40Gi", default="10Gi", validRange={"min": "1Gi", "max": "16Gi", "step": "1Gi"})
VALUES = memory_policy("40Gi", default="8Gi", validValues=["8Gi", "16Gi", "24Gi"])


def one(dev: dict[str, Any], *claims: dict[str, Any], **kw: Any) -> Any:
    return run([slice_("s", [dev], node="n1")], list(claims), **kw)


def consumed(outcome: Any) -> list[dict[str, str]]:
    assert outcome.allocations is not None, outcome.reason
    return [r.get("consumedCapacity") for a in outcome.allocations for r in a["devices"]["results"]]


CONSUMED = [
    pytest.param(STEPPED, None, {"memory": "10Gi"}, id="no request takes the policy default"),
    pytest.param({"value": "40Gi"}, None, {"memory": "40Gi"}, id="no request and no policy takes the whole capacity"),
    pytest.param(STEPPED, "2500Mi", {"memory": "3Gi"}, id="validRange rounds up to the next step"),
    pytest.param(STEPPED, "512Mi", {"memory": "1Gi"}, id="validRange raises a small request to min"),
    pytest.param(STEPPED, "4Gi", {"memory": "4Gi"}, id="a request on a step stays"),
    pytest.param(VALUES, "9Gi", {"memory": "16Gi"}, id="validValues rounds up to the next valid value"),
    pytest.param({"value": "40Gi"}, "7Gi", {"memory": "7Gi"}, id="without a policy the request is taken as it is"),
]


@pytest.mark.parametrize("memory, asked, want", CONSUMED)
def test_consumed_capacity(memory: dict[str, Any], asked: str | None, want: dict[str, str]) -> None:
    capacity = {"capacity": {"requests": {"memory": asked}}} if asked else {}
    assert consumed(one(shared(memory=memory), claim("c", exact("g", **capacity)))) == [want]


FITS = [
    pytest.param(STEPPED, "17Gi", [], id="a request above max makes the device ineligible"),
    pytest.param(VALUES, "25Gi", [], id="a request above every valid value makes the device ineligible"),
    pytest.param({"value": "40Gi"}, "41Gi", [], id="a request above the capacity does not fit"),
    pytest.param(STEPPED, "16Gi", [allocated("h", ("n1", "gpu-0"), shareID="x", consumedCapacity={"memory": "30Gi"})],
                 id="shares that allocated claims hold count against the device"),
]


@pytest.mark.parametrize("memory, asked, held", FITS)
def test_requests_that_do_not_fit(memory: dict[str, Any], asked: str, held: list[dict[str, Any]]) -> None:
    c = claim("c", exact("g", capacity={"requests": {"memory": asked}}))
    assert picked(one(shared(memory=memory), c, held=held)) == "cannot allocate all claims"


def test_two_claims_share_one_device_each_with_its_own_share() -> None:
    a = claim("a", exact("g", capacity={"requests": {"memory": "20Gi"}}))
    b = claim("b", exact("g", capacity={"requests": {f"{DRIVER}/memory": "20Gi"}}))
    outcome = one(shared(memory={"value": "40Gi"}), a, b)
    results = [r for al in outcome.allocations for r in al["devices"]["results"]]
    assert [(r["device"], r["consumedCapacity"]) for r in results] == [("gpu-0", {"memory": "20Gi"})] * 2
    assert results[0]["shareID"] != results[1]["shareID"] and all(len(r["shareID"]) == 36 for r in results)


def test_a_third_share_that_would_overflow_the_device_is_refused() -> None:
    claims = [claim(n, exact("g", capacity={"requests": {"memory": "20Gi"}})) for n in "abc"]
    assert picked(one(shared(memory={"value": "40Gi"}), *claims)) == "cannot allocate all claims"


def test_consumed_capacity_lists_every_capacity_of_the_device_even_zero() -> None:
    dev = shared(memory={"value": "40Gi"}, shares={"value": "4", "requestPolicy": {"default": "0",
                                                                                  "validRange": {"min": "0"}}})
    c = claim("c", exact("g", capacity={"requests": {"memory": "1Gi"}}))
    assert consumed(one(dev, c)) == [{"memory": "1Gi", "shares": "0"}]


def test_a_request_for_a_capacity_the_device_lacks_skips_it() -> None:
    run_ = run([slice_("s", [shared("gpu-0", memory={"value": "40Gi"}), shared("gpu-1", bandwidth={"value": "10G"})],
                       node="n1")], [claim("c", exact("g", capacity={"requests": {"bandwidth": "1G"}}))])
    assert picked(run_) == [[("g", "n1/gpu-1")]]
    assert run_.allocations[0]["devices"]["results"][0]["consumedCapacity"] == {"bandwidth": "1G"}


def test_an_exclusive_device_with_too_little_capacity_is_skipped_and_has_no_share() -> None:
    outcome = run([slice_("s", [device("gpu-0", capacity={"memory": "40Gi"}), device("gpu-1", capacity={"memory": "80Gi"})],
                          node="n1")], [claim("c", exact("g", capacity={"requests": {"memory": "64Gi"}}))])
    assert picked(outcome) == [[("g", "n1/gpu-1")]]
    result = outcome.allocations[0]["devices"]["results"][0]
    assert "shareID" not in result and "consumedCapacity" not in result


def test_a_device_an_allocated_claim_shares_takes_further_shares_but_not_a_whole_device_request() -> None:
    held = [allocated("h", ("n1", "gpu-0"), shareID="x", consumedCapacity={"memory": "10Gi"})]
    part = claim("c", exact("g", capacity={"requests": {"memory": "30Gi"}}))
    assert picked(one(shared(memory={"value": "40Gi"}), part, held=held)) == [[("g", "n1/gpu-0")]]
    # No request and no default policy means the whole 40Gi, which no longer fits.
    assert picked(one(shared(memory={"value": "40Gi"}), claim("c", exact("g")), held=held)) == "cannot allocate all claims"


def test_capacity_requests_are_refused_with_the_gate_off() -> None:
    c = claim("c", exact("g", capacity={"requests": {"memory": "1Gi"}}))
    outcome = one(shared(memory={"value": "40Gi"}), c, features={"DRAConsumableCapacity": False})
    assert outcome.reason == ("claim default/c, request g: has capacity requests, but the DRAConsumableCapacity "
                              "feature is disabled") and outcome.fatal


def test_with_the_gate_off_a_shared_device_is_exclusive() -> None:
    claims = [claim("a", exact("g")), claim("b", exact("g"))]
    outcome = one(shared(memory={"value": "40Gi"}), *claims, features={"DRAConsumableCapacity": False})
    assert picked(outcome) == "cannot allocate all claims"


def test_one_capacity_requested_under_both_spellings_is_an_error() -> None:
    c = claim("c", exact("g", capacity={"requests": {"memory": "1Gi", f"{DRIVER}/memory": "2Gi"}}))
    outcome = one(shared(memory={"value": "40Gi"}), c)
    assert outcome.fatal and outcome.reason == 'capacity "memory" requested both as "gpu.example.com/memory" and as "memory"'
