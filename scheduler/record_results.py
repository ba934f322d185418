"""`--record-results`: every attempt's per-plugin answers written on the pod, as kube-scheduler-simulator does.

`ResultRecorder` is a `CycleObserver` (framework/interfaces.py): the cycle calls `observe` for each
plugin answer and `attempt_done` when the attempt ends. The answers are folded into the
simulator's annotations (`kube-scheduler-simulator.sigs.k8s.io/filter-result` and friends: JSON
maps of node -> plugin -> "passed" / reason / score, or plugin -> "success" / reason), and the
attempt's set is appended to `result-history`. One merge PATCH per attempt goes out through the
RestClient in the background; `close()` waits for the ones still in flight. Besides a bare
Status, `observe` takes PreFilter's `(PreFilterResult, Status)`, PostFilter's
`(PostFilterResult, Status)` (or the nominated node as `node`) and Permit's `(Status, timeout)`,
so the prefilter-result, postfilter-result and permit-result-timeout maps can be filled. The
PodGroup cycle's placement points add PlacementGenerate (placement names or a Status),
PlacementScore and PlacementFinalScore (`node` is the placement's name), written as three more maps.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

import msgspec

from client import errors, resources
from client.rest import RestClient
from scheduler.config import duration
from scheduler.framework.interfaces import PostFilterResult, PreFilterResult
from scheduler.framework.status import Code, Status, is_success

log = logging.getLogger(__name__)

PREFIX = "kube-scheduler-simulator.sigs.k8s.io/"
PREFILTER_STATUS = PREFIX + "prefilter-result-status"
PREFILTER_RESULT = PREFIX + "prefilter-result"
FILTER = PREFIX + "filter-result"
POSTFILTER = PREFIX + "postfilter-result"
PRESCORE = PREFIX + "prescore-result"
SCORE = PREFIX + "score-result"
FINALSCORE = PREFIX + "finalscore-result"
RESERVE = PREFIX + "reserve-result"
PERMIT = PREFIX + "permit-result"
PERMIT_TIMEOUT = PREFIX + "permit-result-timeout"
PREBIND = PREFIX + "prebind-result"
BIND = PREFIX + "bind-result"
SELECTED_NODE = PREFIX + "selected-node"
HISTORY = PREFIX + "result-history"
# The PodGroup cycle's placement points (KEP-5732) have no simulator annotation; haru writes them in
# the same shapes, on every pod of the group, and only for attempts that went through placements.
PLACEMENT_GENERATE = PREFIX + "placementgenerate-result"
PLACEMENT_SCORE = PREFIX + "placementscore-result"
PLACEMENT_FINALSCORE = PREFIX + "placementfinalscore-result"

# The simulator's words for an answer that is not a rejection.
PASSED, SUCCESS, WAIT, NOMINATED = "passed", "success", "wait", "preemption victim"
# The API server refuses a pod whose annotations pass 256 KiB; the oldest history goes first.
ANNOTATIONS_LIMIT = 256 * 1024


def go_json(value: Any) -> str:
    """encoding/json's Marshal: sorted keys, compact, and <, >, & escaped as Go escapes them."""
    text = msgspec.json.encode(value, order="sorted").decode()
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _message(status: Status | None, passed: str = SUCCESS) -> str:
    if is_success(status):
        return passed
    assert status is not None
    return WAIT if status.code is Code.WAIT else status.message


@dataclass
class Attempt:
    """What one scheduling attempt of one pod answered, point by point, in the simulator's shapes."""

    prefilter_status: dict[str, str] = field(default_factory=dict)
    prefilter_result: dict[str, list[str]] = field(default_factory=dict)
    filter: dict[str, dict[str, str]] = field(default_factory=dict)
    postfilter: dict[str, dict[str, str]] = field(default_factory=dict)
    prescore: dict[str, str] = field(default_factory=dict)
    score: dict[str, dict[str, str]] = field(default_factory=dict)
    finalscore: dict[str, dict[str, str]] = field(default_factory=dict)
    reserve: dict[str, str] = field(default_factory=dict)
    permit: dict[str, str] = field(default_factory=dict)
    permit_timeout: dict[str, str] = field(default_factory=dict)
    prebind: dict[str, str] = field(default_factory=dict)
    bind: dict[str, str] = field(default_factory=dict)
    placement_generate: dict[str, str | list[str]] = field(default_factory=dict)  # plugin -> placements / reason
    placement_score: dict[str, dict[str, str]] = field(default_factory=dict)  # placement -> plugin -> raw
    placement_finalscore: dict[str, dict[str, str]] = field(default_factory=dict)  # normalized x weight

    def add(self, point: str, plugin: str, node: str, value: Any) -> None:
        if point == "PreFilter":
            result, status = value if isinstance(value, tuple) else (None, value)
            if isinstance(status, PreFilterResult):
                result, status = status, None
            self.prefilter_status[plugin] = _message(status)
            if isinstance(result, PreFilterResult) and result.node_names is not None:
                self.prefilter_result[plugin] = sorted(result.node_names)
        elif point == "Filter":
            self.filter.setdefault(node, {})[plugin] = _message(value, PASSED)
        elif point == "PostFilter":
            result, status = value if isinstance(value, tuple) else (None, value)
            nominated = node or (result.nominated_node_name if isinstance(result, PostFilterResult) else "")
            for name in self.filter:  # every node the filters saw gets an entry, as upstream's status map has
                self.postfilter.setdefault(name, {})
            if is_success(status) and nominated:
                self.postfilter.setdefault(nominated, {})[plugin] = NOMINATED
        elif point == "PreScore":
            self.prescore[plugin] = _message(value)
        elif point == "Score":
            self.score.setdefault(node, {})[plugin] = str(int(value))
        elif point == "FinalScore":
            self.finalscore.setdefault(node, {})[plugin] = str(int(value))
        elif point == "Reserve":
            self.reserve[plugin] = _message(value)
        elif point == "Permit":
            status, timeout = value if isinstance(value, tuple) else (value, 0.0)
            self.permit[plugin] = _message(status)
            self.permit_timeout[plugin] = duration.format(float(timeout or 0.0))
        elif point == "PreBind":
            self.prebind[plugin] = _message(value)
        elif point == "Bind":
            self.bind[plugin] = _message(value)
        elif point == "PlacementGenerate":
            # A plugin's answer: the names of the placements it made, or the Status that stopped it.
            self.placement_generate[plugin] = list(value) if isinstance(value, list) else _message(value)
        elif point == "PlacementScore":
            self.placement_score.setdefault(node, {})[plugin] = str(int(value))
        elif point == "PlacementFinalScore":
            self.placement_finalscore.setdefault(node, {})[plugin] = str(int(value))
        else:
            raise ValueError(f"unknown extension point {point!r}")

    def annotations(self, selected_node: str) -> dict[str, str]:
        placements = {PLACEMENT_GENERATE: go_json(self.placement_generate),
                      PLACEMENT_SCORE: go_json(self.placement_score),
                      PLACEMENT_FINALSCORE: go_json(self.placement_finalscore)} if self.placement_generate else {}
        return {
            **placements,
            PREFILTER_STATUS: go_json(self.prefilter_status), PREFILTER_RESULT: go_json(self.prefilter_result),
            FILTER: go_json(self.filter), POSTFILTER: go_json(self.postfilter), PRESCORE: go_json(self.prescore),
            SCORE: go_json(self.score), FINALSCORE: go_json(self.finalscore), RESERVE: go_json(self.reserve),
            PERMIT: go_json(self.permit), PERMIT_TIMEOUT: go_json(self.permit_timeout),
            PREBIND: go_json(self.prebind), BIND: go_json(self.bind), SELECTED_NODE: selected_node,
        }


def _history(pod: dict[str, Any]) -> list[dict[str, str]]:
    raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(HISTORY)
    if not raw:
        return []
    try:
        value = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return []  # someone else's text under our key: start over rather than fail the write
    return [entry for entry in value if isinstance(entry, dict)] if isinstance(value, list) else []


def annotations_for(pod: dict[str, Any], attempt: Attempt, selected_node: str) -> dict[str, str]:
    """This attempt's annotations plus the history, trimmed from the oldest end to fit the limit."""
    current = attempt.annotations(selected_node)
    history = _history(pod) + [current]
    others = {k: v for k, v in ((pod.get("metadata") or {}).get("annotations") or {}).items()
              if k not in current and k != HISTORY}
    base = sum(len(k) + len(v) for k, v in {**others, **current}.items()) + len(HISTORY)
    while len(history) > 1 and base + len(go_json(history)) > ANNOTATIONS_LIMIT:
        history.pop(0)
    return {**current, HISTORY: go_json(history)}


class ResultRecorder:
    """The CycleObserver `python -m scheduler --record-results` installs."""

    def __init__(self, client: RestClient) -> None:
        self.client = client
        self._attempts: dict[str, Attempt] = {}
        self._writes: set[asyncio.Task[None]] = set()
        self.written = 0  # PATCHes that succeeded (for tests and the bench's notes)
        self.failed = 0

    @staticmethod
    def _key(pod: dict[str, Any]) -> str:
        meta = pod.get("metadata") or {}
        return meta.get("uid") or f"{meta.get('namespace', '')}/{meta.get('name', '')}"

    def observe(self, pod: dict[str, Any], point: str, plugin: str, node: str, value: Any) -> None:
        self._attempts.setdefault(self._key(pod), Attempt()).add(point, plugin, node, value)

    def attempt_done(self, pod: dict[str, Any], selected_node: str) -> None:
        attempt = self._attempts.pop(self._key(pod), None) or Attempt()
        patch = {"metadata": {"annotations": annotations_for(pod, attempt, selected_node)}}
        task = asyncio.get_running_loop().create_task(self._write(pod, patch))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _write(self, pod: dict[str, Any], patch: dict[str, Any]) -> None:
        meta = pod.get("metadata") or {}
        try:
            await self.client.patch(resources.PODS, meta.get("name", ""), patch, meta.get("namespace"))
            self.written += 1
        except errors.APIError as exc:
            if errors.is_not_found(exc):
                return  # the pod went away while we wrote; nothing to show on it
            self.failed += 1
            log.warning("recording scheduling results on %s/%s: %s", meta.get("namespace"), meta.get("name"), exc)
        except Exception as exc:  # noqa: BLE001 - a lost write must not stop the scheduler
            self.failed += 1
            log.warning("recording scheduling results on %s/%s: %s", meta.get("namespace"), meta.get("name"), exc)

    async def close(self) -> None:
        """Wait for the writes still in flight."""
        while self._writes:
            await asyncio.gather(*list(self._writes), return_exceptions=True)


def new(client: RestClient) -> ResultRecorder:
    """The factory `python -m scheduler --record-results` calls."""
    return ResultRecorder(client)
