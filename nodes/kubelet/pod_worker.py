"""`PodWorker`: one admitted pod on a hollow kubelet, from sandbox to removal.

Order, as the kubelet's pod worker and runtime manager run it:
1. Status Pending (ContainerCreating, PodReadyToStartContainers False), hostIP and startTime.
2. The sandbox: the user-namespace block (hostUsers false; out of blocks: a FailedCreatePodSandBox
   event and a retry, as the runtime's error), then a pod IP from the podCIDR; then the pod's claims
   must exist and be reserved for it or for its PodGroup (else FailedPrepareDynamicResources, and a
   retry).
3. Init containers one by one (a sidecar, `restartPolicy: Always`, only has to start), then every
   regular container.
Each container runs its behaviour steps (`runtime/behaviour.py`). Then restartPolicy and the
CrashLoopBackOff timing (`crash_backoff.py`) decide whether it starts again. Deletion sends
SIGTERM (a process the table says handles it exits at once), then SIGKILL to what still runs after
the grace period times `grace_scale` (exit code 137). Then it writes the final status and deletes
the pod with gracePeriodSeconds=0 and the pod's uid as precondition. `recover()` rebuilds the state from a pod's own status after a restart. Status
writes are coalesced: one writer task sends what `pod_status.render` says now, if it changed.
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Protocol

from client import errors
from client.resources import PODGROUPS, PODS, RESOURCECLAIMS
from client.rest import RestClient
from nodes import userns
from nodes.kubelet import checkpoint, container_env, crash_backoff, devices_seam, events, ipam, pod_status
from nodes.kubelet.pod_status import PodState
from nodes.runtime import behaviour
from nodes.runtime.records import ContainerRecord, PodRecord, Registry, container_id, parse_time, rfc3339

log = logging.getLogger("haru.nodes.pods")
Obj = dict[str, Any]
KILLED = 137  # SIGKILL at the end of the grace period
_BACKOFF_IN_MESSAGE = re.compile(r"^back-off (?:(\d+)m)?(\d+)s ")


def _now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass(frozen=True)
class Settings:
    grace_scale: float = 0.01  # 30 s of grace take 0.3 s: tests stay fast; 1.0 is the real thing (flags.py)
    sandbox_retry: float = 1.0


class NodeContext(Protocol):
    """What a pod worker uses of its kubelet (`kubelet.Kubelet` is one)."""

    client: RestClient
    name: str
    host_ip: str
    registry: Registry
    settings: Settings
    userns: userns.Allocator
    ips: ipam.PodIPs
    backoff: crash_backoff.CrashBackoff
    checkpoint: checkpoint.Checkpoint
    driver: Any

    def backoff_forget(self, uid: str, containers: dict[str, ContainerRecord]) -> None: ...


def _restarts(policy: str, code: int) -> bool:
    return policy == "Always" or (policy == "OnFailure" and code != 0)


class PodWorker:
    def __init__(self, kubelet: NodeContext, pod: Obj, *, recovered: bool = False) -> None:
        self.kubelet = kubelet
        self.pod = pod
        meta = pod["metadata"]
        self.uid: str = meta["uid"]
        self.key = f"{meta.get('namespace')}/{meta['name']}"
        spec = pod.get("spec") or {}
        self.record = PodRecord(self.uid, meta.get("namespace") or "", meta["name"], kubelet.name,
                                host_users=spec.get("hostUsers", True) is not False)
        for c in spec.get("initContainers") or []:
            kind = "sidecar" if pod_status.is_sidecar(c) else "init"
            self.record.containers[c["name"]] = ContainerRecord(c["name"], kind, c.get("image") or "")
        for c in spec.get("containers") or []:
            self.record.containers[c["name"]] = ContainerRecord(c["name"], "regular", c.get("image") or "")
        self.claims: dict[str, Obj] = {}
        self.state = PodState(self.record, kubelet.host_ip, start_time=rfc3339(_now()),
                              resources_status=self._resources_status)
        self.recovered = recovered
        if recovered:
            self._recover()
        self.terminating = False
        self._deleting = asyncio.Event()
        self._dirty = asyncio.Event()
        self._write_lock = asyncio.Lock()
        self._last_written: Obj | None = None
        self._runners: dict[str, asyncio.Task[None]] = {}
        self._task: asyncio.Task[None] | None = None
        self.done = False  # the kubelet runs nothing more here; the pod holds no admission room
        kubelet.registry.add(self.record)

    # -- driven by the kubelet ---------------------------------------------------------------

    async def run(self) -> None:
        """The worker's whole life; the kubelet runs it as a task of its task group."""
        self._task = asyncio.current_task()
        if self.pod["metadata"].get("deletionTimestamp"):
            self._deleting.set()
        try:
            await self._run()
        finally:
            if self._task is not None and self._task.cancelling():
                for task in self._runners.values():
                    task.cancel()

    def update(self, pod: Obj) -> None:
        self.pod = pod
        if pod["metadata"].get("deletionTimestamp"):
            self._deleting.set()
        self._dirty.set()  # readiness gates and generation live in the pod: render again

    async def stop(self) -> None:
        """Stop simulating without touching the API (the process is shutting down)."""
        tasks = [t for t in (self._task, *self._runners.values()) if t is not None and t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def gone(self) -> None:
        """The pod left the API: let everything go at once."""
        if self._task is not None:
            self._task.cancel()
        for task in self._runners.values():
            task.cancel()
        self._release(all_of_it=True)

    # -- the lifecycle -----------------------------------------------------------------------

    async def _run(self) -> None:
        writer = asyncio.create_task(self._writer(), name=f"status {self.key}")
        try:
            if not self.recovered:
                await self._flush()  # Pending, ContainerCreating: the kubelet's first word on a pod
            else:
                await self._recover_env()
            life = asyncio.create_task(self._lifecycle(), name=f"lifecycle {self.key}")
            deletion = asyncio.create_task(self._deleting.wait())
            deadline = asyncio.create_task(self._active_deadline())
            await asyncio.wait({life, deletion, deadline}, return_when=asyncio.FIRST_COMPLETED)
            deadline.cancel()
            if not deletion.done():
                if not life.done():  # activeDeadlineSeconds ran out: the kubelet fails the pod
                    life.cancel()
                    await asyncio.gather(life, return_exceptions=True)
                    self.state.reason = "DeadlineExceeded"
                    self.state.message = "Pod was active on the node longer than the specified deadline"
                elif not life.cancelled() and life.exception() is not None:
                    log.error("pod %s: lifecycle failed: %r", self.key, life.exception())
                # Everything that was going to run has run: the pod is terminal; stop its sidecars.
                await self._stop_containers(self._grace(default=True))
                await self._flush()
                await deletion
            else:
                life.cancel()
                await asyncio.gather(life, return_exceptions=True)
            await self._stop_containers(self._grace())
            await self._flush()
            await self._delete()
        finally:
            writer.cancel()
            await asyncio.gather(writer, return_exceptions=True)

    async def _active_deadline(self) -> None:
        seconds = (self.pod.get("spec") or {}).get("activeDeadlineSeconds")
        if seconds is None:
            await asyncio.Event().wait()
            return
        started = parse_time(self.state.start_time) or _now()
        await asyncio.sleep(max(0.0, float(seconds) - (_now() - started).total_seconds()))

    async def _lifecycle(self) -> None:
        if not self.state.sandbox_ready:
            await self._sandbox()
        await self._prepare_claims()
        spec = self.pod.get("spec") or {}
        policy = spec.get("restartPolicy") or "Always"
        for c_spec in spec.get("initContainers") or []:
            c = self.record.containers[c_spec["name"]]
            if pod_status.is_sidecar(c_spec):
                self._run_container(c_spec, c, "Always")
                while c.started_at is None:
                    await c.changed.wait()
                continue
            if c.state == "terminated" and c.exit_code == 0:
                continue
            init_policy = "Never" if policy == "Never" else "OnFailure"
            self._run_container(c_spec, c, init_policy)
            await self._runners[c.name]
            if c.exit_code != 0:
                return  # restartPolicy Never: the pod has failed
        regular = [self._run_container(s, self.record.containers[s["name"]], policy)
                   for s in spec.get("containers") or []]
        if regular:
            await asyncio.wait(regular)  # not gather: cancelling us must not cancel them

    async def _sandbox(self) -> None:
        while True:
            try:
                if not self.record.host_users:
                    base = self.kubelet.userns.allocate(self.uid)
                    self.record.userns = userns.mapping(base, self.kubelet.userns.ids_per_pod)
                    self.kubelet.checkpoint.write_userns(self.uid, self.record.userns)
                break
            except userns.Exhausted as exc:
                message = f"Failed to create pod sandbox: create user namespace: {exc}"
                await events.record(self.kubelet.client, self.kubelet.name, self.pod, "Warning",
                                    "FailedCreatePodSandBox", message)
                await asyncio.sleep(self.kubelet.settings.sandbox_retry)
        self.record.pod_ip = self.kubelet.ips.allocate(self.uid)
        self.state.sandbox_ready = True
        self._dirty.set()

    async def _prepare_claims(self) -> None:
        """Fetch the pod's ResourceClaims before any container starts, as the kubelet's DRA manager does.

        A claim that is missing, not allocated, or not reserved for this pod holds the pod in
        ContainerCreating with a FailedPrepareDynamicResources event, and is tried again.
        """
        while True:
            problem = await self._claims_problem()
            if problem is None:
                return
            await events.record(self.kubelet.client, self.kubelet.name, self.pod, "Warning",
                                "FailedPrepareDynamicResources", f"Failed to prepare dynamic resources: {problem}")
            await asyncio.sleep(max(self.kubelet.settings.sandbox_retry, 1.0))
            try:
                self.pod = await self.kubelet.client.get(PODS, self.record.name, self.record.namespace)
            except errors.APIError as exc:
                log.info("pod %s: %s", self.key, exc)

    async def _reserved_for_group(self, claim: dict[str, Any]) -> bool:
        """The claim is reserved for the pod's PodGroup (KEP-5729: one claim shared by the group);
        the pod names its group only by name, so the group's uid is looked up."""
        name = ((self.pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
        refs = [r for r in (claim.get("status") or {}).get("reservedFor") or []
                if (r.get("apiGroup"), r.get("resource"), r.get("name")) == ("scheduling.k8s.io", "podgroups", name)]
        if not name or not refs:
            return False
        try:
            group = await self.kubelet.host_client.get(PODGROUPS, name, self.record.namespace)  # not a kubelet's read
        except errors.APIError:
            return False
        return any(r.get("uid") == (group.get("metadata") or {}).get("uid") for r in refs)

    async def _claims_problem(self) -> str | None:
        spec = self.pod.get("spec") or {}
        statuses = {s.get("name"): s.get("resourceClaimName")
                    for s in (self.pod.get("status") or {}).get("resourceClaimStatuses") or []}
        meta = self.pod["metadata"]
        for entry in spec.get("resourceClaims") or []:
            claim_name = entry.get("resourceClaimName") or statuses.get(entry.get("name"))
            if not claim_name:
                if entry.get("resourceClaimTemplateName"):
                    return f"claim for pod claim {entry['name']} has not been created yet"
                continue
            try:
                claim = await self.kubelet.client.get(RESOURCECLAIMS, claim_name, self.record.namespace)
            except errors.APIError as exc:
                return (f"fetch ResourceClaim {claim_name} referenced by pod {meta.get('namespace')}/{meta['name']}: "
                        f"{exc.message}")
            reserved = {r.get("uid") for r in (claim.get("status") or {}).get("reservedFor") or []}
            if self.uid not in reserved and not await self._reserved_for_group(claim):
                return (f"pod {meta['name']}({self.uid}) is not allowed to use ResourceClaim "
                        f"{claim_name}({claim['metadata'].get('uid')})")
            if not (claim.get("status") or {}).get("allocation"):
                return f"ResourceClaim {claim_name} is not allocated"
            self.claims[entry["name"]] = claim
        # The scheduler's claim for extended resources served through DRA (KEP-5004).
        extended = (self.pod.get("status") or {}).get("extendedResourceClaimStatus") or {}
        if extended.get("resourceClaimName"):
            claim_name = extended["resourceClaimName"]
            try:
                claim = await self.kubelet.client.get(RESOURCECLAIMS, claim_name, self.record.namespace)
            except errors.APIError as exc:
                return (f"fetch ResourceClaim {claim_name} referenced by pod {meta.get('namespace')}/{meta['name']}: "
                        f"{exc.message}")
            if not (claim.get("status") or {}).get("allocation"):
                return f"ResourceClaim {claim_name} is not allocated"
            self.claims[claim_name] = claim
        return None

    # -- one container -----------------------------------------------------------------------

    def _run_container(self, spec: Obj, c: ContainerRecord, policy: str) -> asyncio.Task[None]:
        task = asyncio.create_task(self._container_loop(spec, c, policy), name=f"container {self.key}/{c.name}")
        self._runners[c.name] = task
        return task

    async def _container_loop(self, spec: Obj, c: ContainerRecord, policy: str) -> None:
        loop = asyncio.get_running_loop()
        key = f"{self.uid}/{c.name}"
        while True:
            if c.state == "waiting" and c.last_terminated is None:
                await self._start(spec, c)
            if c.state == "running":
                finished_at, code = await self._execute(spec, c)
                self._finish(c, code, finished_at)
            if self.terminating:
                return
            last = c.last_terminated if c.state == "waiting" else None
            code = int(last["exitCode"]) if last else int(c.exit_code or 0)
            if not _restarts(policy, code):
                return
            finished = parse_time(last["finishedAt"]) if last else c.finished_at
            finished_loop = loop.time() - max(0.0, (_now() - (finished or _now())).total_seconds())
            wait = self.kubelet.backoff.in_backoff(key, finished_loop, loop.time())
            while wait > 0:
                if c.state == "terminated":
                    c.last_terminated = pod_status._terminated(c)
                c.state, c.reason = "waiting", "CrashLoopBackOff"
                c.message = crash_backoff.message(self.kubelet.backoff.current(key), c.name, self.record.name,
                                                  self.record.namespace, self.uid)
                c.notify()
                self._dirty.set()
                await events.record(self.kubelet.client, self.kubelet.name, self.pod, "Warning", "BackOff",
                                    f"Back-off restarting failed container {c.name} in pod "
                                    f"{self.record.name}_{self.record.namespace}({self.uid})",
                                    f"spec.containers{{{c.name}}}")
                await asyncio.sleep(wait)
                wait = self.kubelet.backoff.in_backoff(key, finished_loop, loop.time())
            if c.state == "terminated":
                c.last_terminated = pod_status._terminated(c)
            c.restart_count += 1
            c.previous_logs, c.logs = c.logs, []
            c.state, c.reason, c.message = "waiting", "", ""
            await self._start(spec, c)

    async def _start(self, spec: Obj, c: ContainerRecord) -> None:
        while True:
            try:
                env = await self._env(spec)
                break
            except container_env.ConfigError as exc:
                if (c.reason, c.message) != ("CreateContainerConfigError", str(exc)):
                    c.state, c.reason, c.message = "waiting", "CreateContainerConfigError", str(exc)
                    self._dirty.set()
                    await events.record(self.kubelet.client, self.kubelet.name, self.pod, "Warning", "Failed",
                                        f"Error: {exc}", f"spec.containers{{{c.name}}}")
                await asyncio.sleep(self.kubelet.settings.sandbox_retry)
        c.attempt = c.restart_count
        c.container_id = container_id(self.uid, c.name, c.attempt)
        c.state, c.reason, c.message = "running", "", ""
        c.started_at, c.finished_at, c.exit_code = _now().replace(microsecond=0), None, None
        c.env = env
        c.notify()
        self._dirty.set()

    async def _execute(self, spec: Obj, c: ContainerRecord) -> tuple[datetime, int]:
        """Run the steps from the container's start time: a resumed container skips what already happened."""
        moment = c.started_at or _now()
        resumed_logs = bool(c.logs)
        for step in behaviour.plan(spec, self.pod["metadata"].get("annotations")):
            c.on_term = step.on_term
            if step.kind == "print":
                if not resumed_logs or moment > c.logs[-1].time:
                    c.log(step.value, moment=moment)
            elif step.kind == "wait":
                moment = moment + timedelta(seconds=step.value)
                delay = (moment - _now()).total_seconds()
                if delay > 0:
                    await asyncio.sleep(delay)
            elif step.kind == "exit":
                return moment, step.value
            else:
                return _now(), await c.wait_exit()  # runs until it is killed, or ends itself (attach)
        return moment, 0

    def _finish(self, c: ContainerRecord, code: int, finished_at: datetime, reason: str = "",
                message: str = "") -> None:
        c.state, c.exit_code = "terminated", code
        c.reason, c.message = reason or ("Completed" if code == 0 else "Error"), message
        c.finished_at = finished_at.replace(microsecond=0)
        c.notify()
        self._dirty.set()

    async def _env(self, spec: Obj) -> dict[str, str]:
        meta = self.pod["metadata"]
        fields = {"metadata.name": meta["name"], "metadata.namespace": meta.get("namespace") or "",
                  "metadata.uid": self.uid, "spec.nodeName": self.kubelet.name,
                  "spec.serviceAccountName": (self.pod.get("spec") or {}).get("serviceAccountName") or "",
                  "status.hostIP": self.kubelet.host_ip, "status.hostIPs": self.kubelet.host_ip,
                  "status.podIP": self.record.pod_ip, "status.podIPs": self.record.pod_ip}
        env = await container_env.resolve(self.kubelet.client, self.pod, spec, fields)
        env.update(devices_seam.container_env(self.kubelet.driver, self.pod, spec, self.claims))
        return env

    def _resources_status(self, pod: Obj, spec: Obj) -> list[Obj] | None:
        return devices_seam.resources_status(self.kubelet.driver, pod, spec, self.claims)

    # -- ending ------------------------------------------------------------------------------

    def _grace(self, default: bool = False) -> float:
        meta, spec = self.pod["metadata"], self.pod.get("spec") or {}
        seconds = spec.get("terminationGracePeriodSeconds", 30) if default else meta.get(
            "deletionGracePeriodSeconds", spec.get("terminationGracePeriodSeconds", 30))
        return max(0.0, float(seconds or 0)) * self.kubelet.settings.grace_scale

    async def _stop_containers(self, grace: float) -> None:
        self.terminating = True
        now = _now()
        for name, task in self._runners.items():
            c = self.record.containers[name]
            if not task.done() and c.state == "running" and c.on_term is not None:
                task.cancel()  # it exits on SIGTERM: no need to wait out the grace period
                await asyncio.gather(task, return_exceptions=True)
                self._finish(c, c.on_term, now)
        running = [t for t in self._runners.values() if not t.done()]
        if running:
            _, pending = await asyncio.wait(running, timeout=grace)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        now = _now()
        for c in self.record.containers.values():
            if c.state == "running":
                self._finish(c, KILLED, now, "Error")
            elif c.state == "waiting" and c.last_terminated is not None:
                # Crash-looping when the pod ended: it stays as its last run ended.
                last = c.last_terminated
                c.started_at = parse_time(last.get("startedAt"))
                self._finish(c, int(last.get("exitCode") or 0), parse_time(last.get("finishedAt")) or now,
                             last.get("reason") or "", last.get("message") or "")
        self.state.terminal = True
        self._release(all_of_it=False)
        self.done = True
        self._dirty.set()

    def _release(self, all_of_it: bool) -> None:
        """A finished pod gives back its IP; a pod that left the API gives back everything."""
        self.kubelet.ips.release(self.uid)
        if all_of_it:
            self.kubelet.userns.release(self.uid)
            self.kubelet.checkpoint.remove(self.uid)
            self.kubelet.registry.remove(self.uid)
            self.kubelet.backoff_forget(self.uid, self.record.containers)

    async def _delete(self) -> None:
        meta = self.pod["metadata"]
        try:
            await self.kubelet.client.delete(PODS, meta["name"], meta.get("namespace"), uid=self.uid,
                                             grace_period_seconds=0)
        except errors.APIError as exc:
            if not (errors.is_not_found(exc) or exc.code == 409):
                raise

    # -- status ------------------------------------------------------------------------------

    async def _writer(self) -> None:
        delay = 0.2
        while True:
            await self._dirty.wait()
            # One turn of the loop for what the same change set going: a ready sandbox starts its
            # containers at once, and one write then reports both (2 writes per simple pod, as the
            # kubelet's syncPod, instead of 3: bench.nodes, 10,000 pods, 5,000 nodes).
            await asyncio.sleep(0)
            self._dirty.clear()
            try:
                await self._write()
                delay = 0.2
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the status manager retries every failure
                if errors.is_not_found(exc):
                    return
                log.warning("pod %s: status update failed: %s; retrying in %.1fs", self.key, exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 10.0)
                self._dirty.set()

    async def _write(self) -> None:
        async with self._write_lock:
            status = pod_status.render(self.pod, self.state, _now())
            if status == self._last_written:
                return
            patch = {"metadata": {"uid": self.uid}, "status": status}
            meta = self.pod["metadata"]
            updated = await self.kubelet.client.patch(PODS, meta["name"], patch, meta.get("namespace"),
                                                      patch_type="strategic", subresource="status")
            self._last_written = status
            if (updated.get("metadata") or {}).get("uid") == self.uid:
                self.pod = {**self.pod, "status": updated.get("status") or {}}

    async def _flush(self) -> None:
        for attempt in range(5):
            try:
                await self._write()
                return
            except errors.APIError as exc:
                if errors.is_not_found(exc):
                    return
                await asyncio.sleep(0.2 * (attempt + 1))

    # -- after a restart ---------------------------------------------------------------------

    async def _recover_env(self) -> None:
        spec = self.pod.get("spec") or {}
        for c_spec in (spec.get("initContainers") or []) + (spec.get("containers") or []):
            c = self.record.containers[c_spec["name"]]
            if c.state == "running":
                try:
                    c.env = await self._env(c_spec)
                except (container_env.ConfigError, errors.APIError) as exc:
                    log.info("pod %s: container %s: env not re-derived: %s", self.key, c.name, exc)

    def _recover(self) -> None:
        """Take the runtime state back from the pod's own status: same IDs, times, restart counts."""
        status = self.pod.get("status") or {}
        self.state.start_time = status.get("startTime") or self.state.start_time
        self.record.pod_ip = status.get("podIP") or ""
        for cond in status.get("conditions") or []:
            if cond.get("type") in pod_status.KUBELET_CONDITIONS and cond.get("lastTransitionTime"):
                self.state.transitions[cond["type"]] = (cond.get("status"), cond["lastTransitionTime"])
            if cond.get("type") == "PodReadyToStartContainers" and cond.get("status") == "True":
                self.state.sandbox_ready = bool(self.record.pod_ip)
        if self.state.sandbox_ready:
            self.kubelet.ips.restore(self.uid, self.record.pod_ip)
            base = self.kubelet.userns.base_of(self.uid)
            if base is not None:
                self.record.userns = userns.mapping(base, self.kubelet.userns.ids_per_pod)
        spec = self.pod.get("spec") or {}
        specs = {c["name"]: c for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])}
        loop_now = asyncio.get_running_loop().time()
        for cs in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
            c = self.record.containers.get(cs.get("name"))
            if c is None or not cs.get("containerID"):
                continue
            c.container_id = cs["containerID"]
            c.restart_count = int(cs.get("restartCount") or 0)
            c.attempt = c.restart_count
            last = (cs.get("lastState") or {}).get("terminated")
            c.last_terminated = dict(last) if last else None
            state = cs.get("state") or {}
            if "running" in state:
                c.state, c.started_at = "running", parse_time(state["running"].get("startedAt"))
            elif "terminated" in state:
                t = state["terminated"]
                c.state, c.exit_code, c.reason = "terminated", int(t.get("exitCode") or 0), t.get("reason") or ""
                c.message = t.get("message") or ""
                c.started_at, c.finished_at = parse_time(t.get("startedAt")), parse_time(t.get("finishedAt"))
            elif "waiting" in state:
                w = state["waiting"]
                c.state, c.reason, c.message = "waiting", w.get("reason") or "", w.get("message") or ""
                match = _BACKOFF_IN_MESSAGE.match(c.message)
                if match and last:
                    seconds = int(match.group(1) or 0) * 60 + int(match.group(2))
                    ago = (_now() - (parse_time(last.get("finishedAt")) or _now())).total_seconds()
                    self.kubelet.backoff.restore(f"{self.uid}/{c.name}", seconds, loop_now - ago)
            # The log lines of this run and the last one follow from the steps and their start times.
            if c.name in specs and c.started_at is not None:
                c.logs = _replay(specs[c.name], self.pod, c.started_at)
            if c.name in specs and last and last.get("startedAt"):
                c.previous_logs = _replay(specs[c.name], self.pod, parse_time(last["startedAt"]))


def _replay(spec: Obj, pod: Obj, started: datetime | None) -> list[Any]:
    if started is None:
        return []
    scratch = ContainerRecord(spec["name"], "regular", "")
    moment, now = started, _now()
    for step in behaviour.plan(spec, pod["metadata"].get("annotations")):
        if moment > now or step.kind in ("exit", "forever"):
            break
        if step.kind == "print":
            scratch.log(step.value, moment=moment)
        elif step.kind == "wait":
            moment += timedelta(seconds=step.value)
    return scratch.logs
