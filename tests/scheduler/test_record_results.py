"""`scheduler.record_results.ResultRecorder`: one attempt's answers become the simulator's annotations.

A fake RestClient keeps each PATCH; the cases feed `observe` as the cycle would and compare the
annotation values with the JSON kube-scheduler-simulator writes for the same answers.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest

from client import errors, resources
from scheduler import record_results as rr
from scheduler.framework.interfaces import PostFilterResult, PreFilterResult
from scheduler.framework.status import Status
from tests.scheduler.fakes import pod


class FakeClient:
    def __init__(self, fail: errors.APIError | None = None) -> None:
        self.patches: list[tuple[Any, str, Any, str | None]] = []
        self.fail = fail

    async def patch(self, resource: Any, name: str, body: Any, namespace: str | None = None, **_: Any) -> dict[str, Any]:
        await asyncio.sleep(0)  # a real write yields; the recorder must not wait for it inline
        if self.fail is not None:
            raise self.fail
        self.patches.append((resource, name, body, namespace))
        return {}


def one_attempt(recorder: rr.ResultRecorder, p: dict[str, Any]) -> None:
    recorder.observe(p, "PreFilter", "NodeResourcesFit", "", None)
    recorder.observe(p, "PreFilter", "NodeAffinity", "", (PreFilterResult({"n2", "n1"}), None))
    recorder.observe(p, "Filter", "NodeResourcesFit", "n1", None)
    recorder.observe(p, "Filter", "NodeResourcesFit", "n2", Status.unschedulable("Insufficient cpu"))
    recorder.observe(p, "Filter", "TaintToleration", "n1", None)
    recorder.observe(p, "PreScore", "TaintToleration", "", None)
    recorder.observe(p, "Score", "NodeResourcesFit", "n1", 73)
    recorder.observe(p, "FinalScore", "NodeResourcesFit", "n1", 73)
    recorder.observe(p, "Score", "TaintToleration", "n1", 0)
    recorder.observe(p, "FinalScore", "TaintToleration", "n1", 300)
    recorder.observe(p, "Reserve", "VolumeBinding", "", None)
    recorder.observe(p, "Permit", "GangScheduling", "", (Status.wait("waiting for the gang"), 300.0))
    recorder.observe(p, "PreBind", "DynamicResources", "", Status.skip())
    recorder.observe(p, "Bind", "DefaultBinder", "", None)


async def test_an_attempt_is_one_patch_with_the_simulators_annotations() -> None:
    client = FakeClient()
    recorder = rr.ResultRecorder(client)  # type: ignore[arg-type]
    p = pod("web-0")
    one_attempt(recorder, p)
    recorder.attempt_done(p, "n1")
    assert client.patches == []  # sent in the background, not inline
    await recorder.close()
    assert len(client.patches) == 1
    resource, name, body, namespace = client.patches[0]
    assert (resource, name, namespace) == (resources.PODS, "web-0", "default")
    got = body["metadata"]["annotations"]
    assert got[rr.PREFILTER_STATUS] == '{"NodeAffinity":"success","NodeResourcesFit":"success"}'
    assert got[rr.PREFILTER_RESULT] == '{"NodeAffinity":["n1","n2"]}'
    assert got[rr.FILTER] == ('{"n1":{"NodeResourcesFit":"passed","TaintToleration":"passed"},'
                              '"n2":{"NodeResourcesFit":"Insufficient cpu"}}')
    assert got[rr.POSTFILTER] == "{}"
    assert got[rr.PRESCORE] == '{"TaintToleration":"success"}'
    assert got[rr.SCORE] == '{"n1":{"NodeResourcesFit":"73","TaintToleration":"0"}}'
    assert got[rr.FINALSCORE] == '{"n1":{"NodeResourcesFit":"73","TaintToleration":"300"}}'
    assert got[rr.RESERVE] == '{"VolumeBinding":"success"}'
    assert got[rr.PERMIT] == '{"GangScheduling":"wait"}'
    assert got[rr.PERMIT_TIMEOUT] == '{"GangScheduling":"5m0s"}'
    assert got[rr.PREBIND] == '{"DynamicResources":""}'
    assert got[rr.BIND] == '{"DefaultBinder":"success"}'
    assert got[rr.SELECTED_NODE] == "n1"
    history = msgspec.json.decode(got[rr.HISTORY])
    assert len(history) == 1 and history[0][rr.FILTER] == got[rr.FILTER] and history[0][rr.SELECTED_NODE] == "n1"
    assert recorder.written == 1


async def test_a_failed_attempt_names_the_preemption_victim_node_and_keeps_the_history() -> None:
    client = FakeClient()
    recorder = rr.ResultRecorder(client)  # type: ignore[arg-type]
    earlier = {rr.FILTER: '{"n9":{"NodeName":"passed"}}', rr.SELECTED_NODE: "n9"}
    p = pod("big")
    p["metadata"]["annotations"] = {rr.HISTORY: rr.go_json([earlier]), "team": "ml"}
    recorder.observe(p, "Filter", "NodeResourcesFit", "n1", Status.unschedulable("Insufficient cpu"))
    recorder.observe(p, "Filter", "NodeResourcesFit", "n2", Status.unschedulable("Insufficient <gpu> & cpu"))
    recorder.observe(p, "PostFilter", "DefaultPreemption", "", (PostFilterResult("n2"), None))
    recorder.attempt_done(p, "")
    await recorder.close()
    got = client.patches[0][2]["metadata"]["annotations"]
    assert got[rr.POSTFILTER] == '{"n1":{},"n2":{"DefaultPreemption":"preemption victim"}}'
    assert "\\u003cgpu\\u003e \\u0026 cpu" in got[rr.FILTER]  # escaped as Go's encoding/json escapes
    assert got[rr.SELECTED_NODE] == ""
    history = msgspec.json.decode(got[rr.HISTORY])
    assert [h[rr.SELECTED_NODE] for h in history] == ["n9", ""]
    assert "team" not in got  # a merge patch leaves the user's own annotations alone


async def test_history_is_trimmed_from_the_oldest_end_to_fit_the_annotation_limit() -> None:
    recorder = rr.ResultRecorder(FakeClient())  # type: ignore[arg-type]
    p = pod("flappy")
    big = {rr.FILTER: "x" * 40_000, rr.SELECTED_NODE: "old"}
    p["metadata"]["annotations"] = {rr.HISTORY: rr.go_json([big] * 10)}
    recorder.observe(p, "Filter", "NodeName", "n1", None)
    recorder.attempt_done(p, "n1")
    await recorder.close()
    got = recorder.client.patches[0][2]["metadata"]["annotations"]  # type: ignore[attr-defined]
    assert sum(len(k) + len(v) for k, v in got.items()) <= rr.ANNOTATIONS_LIMIT
    history = msgspec.json.decode(got[rr.HISTORY])
    assert history[-1][rr.SELECTED_NODE] == "n1" and 1 < len(history) < 11


async def test_attempts_of_different_pods_do_not_mix() -> None:
    client = FakeClient()
    recorder = rr.ResultRecorder(client)  # type: ignore[arg-type]
    a, b = pod("a"), pod("b")
    recorder.observe(a, "Filter", "NodeName", "n1", None)
    recorder.observe(b, "Filter", "NodeName", "n2", Status.unresolvable("node(s) didn't match the requested node name"))
    recorder.attempt_done(b, "")
    recorder.attempt_done(a, "n1")
    await recorder.close()
    by_pod = {name: body["metadata"]["annotations"][rr.FILTER] for _, name, body, _ in client.patches}
    assert by_pod == {"a": '{"n1":{"NodeName":"passed"}}',
                      "b": '{"n2":{"NodeName":"node(s) didn\'t match the requested node name"}}'}


@pytest.mark.parametrize("code, counted", [(404, 0), (422, 1)])
async def test_a_lost_write_is_counted_unless_the_pod_is_gone(code: int, counted: int) -> None:
    recorder = rr.ResultRecorder(FakeClient(errors.APIError(code, "x", "y")))  # type: ignore[arg-type]
    p = pod("gone")
    recorder.attempt_done(p, "")
    await recorder.close()
    assert (recorder.written, recorder.failed) == (0, counted)


def test_an_unknown_point_is_a_bug() -> None:
    with pytest.raises(ValueError):
        rr.Attempt().add("Prefilter", "X", "", None)
