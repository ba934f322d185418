"""ImageLocality: sumImageScores with spread, clamped by container count (upstream's formulas)."""

from __future__ import annotations

import pytest

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.node_info import ImageState
from scheduler.plugins import image_locality
from tests.scheduler import fakes

MB = 1024 * 1024


def pod_with_images(*images: str, init: tuple[str, ...] = ()) -> dict:
    spec = {"containers": [{"name": f"c{i}", "image": im} for i, im in enumerate(images)]}
    if init:
        spec["initContainers"] = [{"name": f"i{i}", "image": im} for i, im in enumerate(init)]
    return fakes.pod("p", spec=spec)


CASES = [
    # Upstream image_locality_test "two images spread on two nodes, prefer the larger image one":
    # n1: 40MB * 1/2 = 20MB, below the 23MB floor -> 0; n2: 300MB * 1/2 = 150MB -> 100*(150-23)/(2000-23) = 6.
    ("Two images on one node each prefer the larger image",
     pod_with_images("gcr.io/40", "gcr.io/300"),
     {"n1": {"gcr.io/40:latest": 40 * MB}, "n2": {"gcr.io/300:latest": 300 * MB}},
     {"n1": 0, "n2": 6}),
    # An image on both nodes spreads fully: 250MB * 2/2 = 250MB; one container -> 100*(250-23)/(1000-23) = 23.
    ("An image every node holds scores the same everywhere",
     pod_with_images("nginx:1.25"), {"n1": {"nginx:1.25": 250 * MB}, "n2": {"nginx:1.25": 250 * MB}},
     {"n1": 23, "n2": 23}),
    # 3000MB * 1/2 = 1500MB is clamped to the one-container ceiling of 1000MB -> 100.
    ("A sum above the ceiling is clamped to 100", pod_with_images("big"),
     {"n1": {"big:latest": 3000 * MB}, "n2": {}}, {"n1": 100, "n2": 0}),
    # Init containers count in the sum and in the ceiling: (600+600)*1/2 = 600MB over 2 containers ->
    # 100*(600-23)/(2000-23) = 29.
    ("Init container images count too", pod_with_images("app", init=("setup",)),
     {"n1": {"app:latest": 600 * MB, "setup:latest": 600 * MB}, "n2": {}}, {"n1": 29, "n2": 0}),
    ("A tagged name does not match another tag", pod_with_images("redis:7"),
     {"n1": {"redis:6": 900 * MB}, "n2": {}}, {"n1": 0, "n2": 0}),
]


@pytest.mark.parametrize("case, pod, images, want", CASES, ids=[c[0] for c in CASES])
def test_score(case: str, pod: dict, images: dict, want: dict) -> None:
    handle = fakes.FakeHandle([fakes.node(n) for n in images])
    holders: dict[str, int] = {}
    for held in images.values():
        for name in held:
            holders[name] = holders.get(name, 0) + 1
    for info in handle.snapshot:
        info.image_states = {name: ImageState(size, holders[name]) for name, size in images[info.name].items()}
    plugin = image_locality.new({}, handle, {})
    got = {}
    for info in handle.snapshot:
        score, status = plugin.score(CycleState(), pod, info)
        assert status is None
        got[info.name] = score
    assert got == want


@pytest.mark.parametrize("image, normalized", [("nginx", "nginx:latest"), ("nginx:1.25", "nginx:1.25"),
                                               ("localhost:5000/app", "localhost:5000/app:latest"),
                                               ("localhost:5000/app:v2", "localhost:5000/app:v2")])
def test_untagged_names_get_latest(image: str, normalized: str) -> None:
    assert image_locality.normalized_image_name(image) == normalized
