"""The TTL-after-finished controller: deletes a finished Job `ttlSecondsAfterFinished` after it
ended (upstream's pkg/controller/ttlafterfinished), keyed `ns/name`.

The Job ended when its Complete or Failed condition turned True (that condition's
lastTransitionTime, else completionTime). Until then the key is requeued for the time left. The
delete is foreground (the pods go first) with the Job's uid as a precondition, so a Job recreated
under the same name is not deleted. The clock is injectable for tests.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Hashable
from typing import Any

from client import errors
from client.resources import JOBS
from client.rest import RestClient
from controllers import job_conditions, timestamps
from controllers.reconciling import Result, Watch, by_name

log = logging.getLogger("haru.controllers.ttl")


def expires_at(job: dict[str, Any]) -> float | None:
    """When a finished Job with a TTL may go; None while it runs or has no TTL."""
    ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
    ended = job_conditions.finished(job)
    if ttl is None or ended is None:
        return None
    at = timestamps.parse(ended.get("lastTransitionTime")) or timestamps.parse((job.get("status") or {}).get("completionTime"))
    return None if at is None else at + int(ttl)


class TTLAfterFinishedController:
    name = "ttl-after-finished"

    def __init__(self, client: RestClient, *, clock: Callable[[], float] = time.time) -> None:
        self.client, self.clock = client, clock
        self.jobs = Watch(JOBS, by_name)
        self.watches = [self.jobs]
        self._ctx: Any = None

    async def prepare(self, ctx: Any) -> None:
        self._ctx = ctx

    async def reconcile(self, key: Hashable) -> Result | None:
        informer = self._ctx.informer(self.jobs) if self._ctx is not None else None
        job = informer.store.get(key) if informer is not None else None
        if job is None or (job.get("metadata") or {}).get("deletionTimestamp"):
            return None
        at = expires_at(job)
        if at is None:
            return None
        left = at - self.clock()
        if left > 0:
            return Result(requeue_after=left)
        meta = job["metadata"]
        log.info("deleting job %s/%s: %ss after it finished", meta.get("namespace"), meta.get("name"),
                 job["spec"]["ttlSecondsAfterFinished"])
        try:
            await self.client.delete(JOBS, meta["name"], meta.get("namespace"), propagation_policy="Foreground",
                                     uid=meta.get("uid"))
        except errors.APIError as exc:
            if not (errors.is_not_found(exc) or errors.is_conflict(exc)):
                raise
        return None
