"""GangScheduling's permit timeout end to end: a gang that reaches Permit but never completes its
quorum lets go of everything when the timeout fires.

`haru up` with the gang gates and two hollow nodes of 2 virtual GPUs each; a second scheduler runs
in this test's process under its own schedulerName, with the full default profile and a 3-second
permit timeout instead of upstream's fixed 5 minutes (the plugin's constructor parameter). The
gang's quorum never completes because one member is held where the barrier cannot count it: the
test's GangScheduling skips that member's reservation, a stand-in for a member held elsewhere.
Everything else is the real path: the PodGroup cycle commits all three pods (assumed, DRA claims
reserved in memory), they wait at Permit, the timer rejects them, and the binding cycles undo it
all: nothing is bound, no assumed pod or pending claim allocation is left, the pods go back to
the queue with upstream's "rejected due to timeout after waiting 3s at plugin GangScheduling", and
the PodGroup says PodGroupScheduled=False (Unschedulable) with a FailedScheduling event.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from client import kubeconfig
from client import resources as api
from client.rest import RestClient
from scheduler.default_profile import default_config
from scheduler.features import defaults
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.status import Status
from scheduler.plugins import names
from scheduler.plugins.gang_scheduling import GangScheduling
from scheduler.registry import REGISTRY
from scheduler.scheduler import Scheduler
from tests.conftest import Cluster, start_haru, stop_haru

pytestmark = pytest.mark.slow
Obj = dict[str, Any]
NODES, GPUS = 2, 2
GATES = "GenericWorkload=true,GangScheduling=true"
SCHEDULER = "gang-timeout-scheduler"
TIMEOUT = 3.0
MESSAGE = "rejected due to timeout after waiting 3s at plugin GangScheduling"
TIMED_OUT = f"0/1 nodes are available: 1 {MESSAGE}."
LOST = "0/1 nodes are available: 1 pod group train lost pod train-held before binding."
CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.nvidia.com"},
         "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}}
TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [
                {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 1}}]}}}}


class HeldElsewhere(GangScheduling):
    """The real barrier, except that members named `*-held` never count toward its quorum; it
    also notes, as each member reaches Permit, which of its claims the DRA plugin holds for it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.claims = self.handle.store(api.RESOURCECLAIMS)
        self.reached: dict[str, list[str]] = {}  # pod name -> uids of its claims at Permit

    def reserve(self, state: CycleState, pod: Obj, node_name: str) -> Status | None:
        if pod["metadata"]["name"].endswith("-held"):
            return None
        return super().reserve(state, pod, node_name)

    def permit(self, state: CycleState, pod: Obj, node_name: str) -> tuple[Status | None, float]:
        names_ = [s.get("resourceClaimName") for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []]
        claims = [self.claims.get(f"default/{n}") for n in names_ if n]
        self.reached[pod["metadata"]["name"]] = [c["metadata"]["uid"] for c in claims if c]
        return super().permit(state, pod, node_name)


@pytest.fixture
def haru(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    data = tmp_path_factory.mktemp("haru-permit-timeout")
    cluster_file = Path(data) / "cluster.yaml"
    cluster_file.write_text(f"pools:\n- {{name: gpu, count: {NODES}, devices: {{gpus: {GPUS}, model: h100}}}}\n")
    cluster = start_haru(str(data / "data"), "-f", str(cluster_file), "--feature-gates", GATES)
    try:
        deadline = time.monotonic() + 60
        while len(cluster.kubectl("get", "nodes", "-o", "name").stdout.split()) < NODES:
            assert time.monotonic() < deadline, "the nodes did not register"
            time.sleep(0.2)
        cluster.kubectl("wait", "node", "--all", "--for=condition=Ready", "--timeout=60s")
        cluster.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List",
                                                              "items": [CLASS, TEMPLATE]}))
        yield cluster
    finally:
        stop_haru(cluster)


def gang_pod(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedulerName": SCHEDULER, "schedulingGroup": {"podGroupName": "train"},
                     "terminationGracePeriodSeconds": 0,
                     "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
                     "containers": [{"name": "main", "image": "busybox", "command": ["sleep", "3600"],
                                     "resources": {"claims": [{"name": "gpu"}]}}]}}


async def until(check: Any, what: str, seconds: float = 60) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        got = await check()
        if got:
            return got
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        await asyncio.sleep(0.1)


async def test_the_permit_timeout_releases_every_reservation_of_an_incomplete_gang(haru: Cluster) -> None:
    features = {**defaults(), "GenericWorkload": True, "GangScheduling": True}
    made: list[HeldElsewhere] = []

    def gang(args: Any, handle: Any, feats: Any) -> HeldElsewhere:
        made.append(HeldElsewhere(handle, permit_timeout=TIMEOUT))
        return made[-1]

    client = RestClient(kubeconfig.load(haru.kubeconfig), user_agent="haru-scheduler-test")
    sched = Scheduler(client, default_config(features, scheduler_name=SCHEDULER), features,
                      registry={**REGISTRY, names.GANG_SCHEDULING: gang})
    await sched.start(sync_timeout=30)
    try:
        fw = sched.frameworks[SCHEDULER]
        dra = fw.plugins[names.DYNAMIC_RESOURCES]
        group = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                 "metadata": {"name": "train", "namespace": "default"},
                 "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}}}
        await client.create(api.PODGROUPS, group, "default")
        pods = [gang_pod("train-0"), gang_pod("train-1"), gang_pod("train-held")]
        for body in pods:
            await client.create(api.PODS, body, "default")

        # All three reach Permit, each assumed on a node with its claim allocated in memory.
        async def all_waiting() -> bool:
            return len(made[0].reached) == 3 and len(sched.waiting_pods) == 3

        await until(all_waiting, "the gang waiting at Permit")
        claim_uids = [uid for uids in made[0].reached.values() for uid in uids]
        assert len(claim_uids) == 3
        assert all(dra.claims.has_pending(uid) for uid in claim_uids)
        assert all(sched.cache.is_assumed(w.pod) for w in sched.waiting_pods.values())

        async def pod(name: str) -> Obj:
            return await client.get(api.PODS, name, "default")

        def rejection(current: Obj) -> str:
            conds = (current.get("status") or {}).get("conditions") or []
            return next((c["message"] for c in conds if c["type"] == "PodScheduled" and c.get("status") == "False"
                         and c.get("reason") == "Unschedulable"), "")

        async def all_rejected() -> list[str]:
            messages = [rejection(await pod(body["metadata"]["name"])) for body in pods]
            # Earlier cycles may have left their own word (the gang still arriving): wait for Permit's.
            return messages if all(m in (TIMED_OUT, LOST) for m in messages) else []

        # The timer rejects the waiting members; the first to let go rejects any sibling still
        # waiting ("lost pod"), as upstream's Unreserve does. Both are GangScheduling's words.
        messages = await until(all_rejected, "the gang's pods rejected at Permit")
        assert TIMED_OUT in messages, messages
        for body in pods:
            current = await pod(body["metadata"]["name"])
            assert sched.queue.where(current) != "", "rejected members go back to the queue"
        # Requeued, the gang would be tried (and time out) again: stop new attempts, let any one
        # under way run out, then nothing may be held anywhere.
        sched.queue.close()

        async def nothing_waits() -> bool:
            return not sched.waiting_pods

        await until(nothing_waits, "the last wait at Permit to end")
        await asyncio.sleep(0.5)  # its binding task releases what it held
        for body in pods:
            current = await pod(body["metadata"]["name"])
            assert not current["spec"].get("nodeName"), current["spec"]
            assert not sched.cache.has_pod(current), f"{body['metadata']['name']} is still assumed"
        assert not any(dra.claims.has_pending(uid) for uid in claim_uids)
        claims = (await client.list(api.RESOURCECLAIMS, "default"))["items"]
        assert len(claims) == 3 and all(not (c.get("status") or {}).get("allocation") for c in claims), claims

        async def group_condition() -> Obj | None:
            got = await client.get(api.PODGROUPS, "train", "default")
            return next((c for c in (got.get("status") or {}).get("conditions") or []
                         if c["type"] == "PodGroupScheduled"), None)

        condition = await until(group_condition, "the PodGroupScheduled condition")
        assert (condition["status"], condition["reason"]) == ("False", "Unschedulable"), condition
        assert condition["message"] in (TIMED_OUT, LOST), condition

        async def group_events() -> list[Obj]:
            listed = (await client.list(api.EVENTS_V1, "default"))["items"]
            return [e for e in listed if (e.get("regarding") or {}).get("kind") == "PodGroup"
                    and e.get("reason") == "FailedScheduling" and e.get("note") in (TIMED_OUT, LOST)]

        events = await until(group_events, "the PodGroup's FailedScheduling event")
        assert all(e["type"] == "Warning" and e["reportingController"] == SCHEDULER for e in events), events
    finally:
        await sched.stop()
        await client.close()
