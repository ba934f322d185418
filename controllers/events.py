"""Events the controllers record (core/v1, as client-go's recorder writes them for kube-controller-manager).

`record(client, component, obj, type, reason, message)` records one Event about `obj` with
`source.component` set to the controller's component name, through that component's shared
`client.event_recorder.CoreEventRecorder`: repeats are counted on the first event, ten different
messages of one reason about one object are combined, and a burst past 25 per object is dropped,
as upstream's EventCorrelator does. Recording never fails the caller: a lost event is logged.
Used by every controller that writes events (replica_set.py, job.py, cron_job.py, …).
"""

from __future__ import annotations

from typing import Any

from client.event_recorder import recorder_for
from client.rest import RestClient


async def record(client: RestClient, component: str, obj: dict[str, Any], kind: str, reason: str,
                 message: str) -> None:
    await recorder_for(client, component).record(obj, kind, reason, message)
