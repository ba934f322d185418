"""`/containerLogs/{ns}/{pod}/{container}`: a container's log lines as the kubelet streams them.

`LogOptions.parse` reads the PodLogOptions query (follow, previous, timestamps, tailLines,
sinceSeconds, sinceTime, limitBytes); `which_run` applies the kubelet's container-status rules
(waiting, terminated, previous not found) to pick a run or refuse; `stream` writes text/plain,
tail first and then the since filter as the kubelet's log reader does, timestamps in its fixed
nanosecond format, cut at limitBytes, and with follow keeps writing until the run ends.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from multidict import MultiMapping

from nodes.runtime_view import ContainerView, LogLine


class LogError(ValueError):
    """A request the kubelet answers 400 with this text."""


def _bool(query: MultiMapping[str], name: str) -> bool:
    value = query.get(name, "")
    if value.lower() in ("", "0", "f", "false"):
        return False
    if value.lower() in ("1", "t", "true"):
        return True
    raise LogError(f'strconv.ParseBool: parsing "{value}": invalid syntax')


def _int(query: MultiMapping[str], name: str) -> int | None:
    value = query.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise LogError(f'strconv.ParseInt: parsing "{value}": invalid syntax') from None


def parse_time(value: str) -> datetime.datetime:
    """RFC 3339 (what the API server writes for sinceTime), as an aware UTC datetime."""
    try:
        parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise LogError(f'parsing time "{value}" as "2006-01-02T15:04:05Z07:00": cannot parse') from None
    if parsed.tzinfo is None:
        raise LogError(f'parsing time "{value}" as "2006-01-02T15:04:05Z07:00": missing time zone')
    return parsed.astimezone(datetime.timezone.utc)


@dataclass(frozen=True)
class LogOptions:
    follow: bool = False
    previous: bool = False
    timestamps: bool = False
    tail_lines: int | None = None
    since_seconds: int | None = None
    since_time: datetime.datetime | None = None
    limit_bytes: int | None = None

    @classmethod
    def parse(cls, query: MultiMapping[str]) -> "LogOptions":
        since_time = query.get("sinceTime")
        return cls(follow=_bool(query, "follow"), previous=_bool(query, "previous"),
                   timestamps=_bool(query, "timestamps"), tail_lines=_int(query, "tailLines"),
                   since_seconds=_int(query, "sinceSeconds"),
                   since_time=parse_time(since_time) if since_time else None, limit_bytes=_int(query, "limitBytes"))

    def since(self, now: datetime.datetime) -> datetime.datetime | None:
        if self.since_seconds is not None:
            return now - datetime.timedelta(seconds=self.since_seconds)
        return self.since_time


def _status_of(pod: dict[str, Any], container: str) -> dict[str, Any] | None:
    status = pod.get("status") or {}
    for key in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"):
        for entry in status.get(key) or []:
            if entry.get("name") == container:
                return dict(entry)
    return None


def which_run(pod: dict[str, Any], container: str, previous: bool) -> bool:
    """Whether to read the previous run (True) or the latest (False); LogError when neither has logs.

    The order of the checks is the kubelet's validateContainerLogStatus.
    """
    name = pod["metadata"]["name"]
    status = _status_of(pod, container)
    if status is None:
        raise LogError(f'container "{container}" in pod "{name}" is not available')
    state = status.get("state") or {}
    last = (status.get("lastState") or {}).get("terminated")
    if previous:
        if not last or not last.get("containerID"):
            raise LogError(f'previous terminated container "{container}" in pod "{name}" not found')
        return True
    if "running" in state:
        return False
    if "terminated" in state:
        if state["terminated"].get("containerID") or status.get("containerID"):
            return False
        if last and last.get("containerID"):
            return True
        raise LogError(f'container "{container}" in pod "{name}" is terminated')
    if last:
        if not last.get("containerID"):
            raise LogError(f'container "{container}" in pod "{name}" is terminated')
        return True
    if "waiting" in state:
        reason = (state["waiting"] or {}).get("reason", "")
        if reason == "ErrImagePull":
            reason = "image can't be pulled"
        elif reason == "ImagePullBackOff":
            reason = "trying and failing to pull image"
        raise LogError(f'container "{container}" in pod "{name}" is waiting to start: {reason}')
    raise LogError(f'container "{container}" in pod "{name}" is waiting to start - no logs yet')


def format_line(line: LogLine, timestamps: bool) -> bytes:
    if not timestamps:
        return line.text.encode() + b"\n"
    # The kubelet's timeFormatOut: always nine fractional digits, so lines sort as text.
    stamp = line.time.astimezone(datetime.timezone.utc)
    text = stamp.strftime("%Y-%m-%dT%H:%M:%S") + f".{stamp.microsecond:06d}000Z"
    return f"{text} {line.text}\n".encode()


def select(lines: list[LogLine], opts: LogOptions, now: datetime.datetime) -> list[LogLine]:
    if opts.tail_lines is not None:
        lines = lines[len(lines) - opts.tail_lines:] if opts.tail_lines < len(lines) else lines
        if opts.tail_lines == 0:
            lines = []
    since = opts.since(now)
    if since is not None:
        lines = [line for line in lines if line.time >= since]
    return lines


async def stream(request: web.Request, pod: dict[str, Any], container: ContainerView,
                 opts: LogOptions) -> web.StreamResponse:
    previous = which_run(pod, container.name, opts.previous)
    now = datetime.datetime.now(datetime.timezone.utc)
    response = web.StreamResponse(headers={"Content-Type": "text/plain"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    budget = opts.limit_bytes
    all_lines = list(container.logs(previous))
    seen = len(all_lines)
    for line in select(all_lines, opts, now):
        budget = await _write(response, format_line(line, opts.timestamps), budget)
        if budget == 0:
            return await _done(response)
    # Following the previous run makes no sense: it has ended. The latest one is followed until it ends.
    while opts.follow and not previous and await container.wait_for_logs(seen):
        fresh = list(container.logs(False))[seen:]
        seen += len(fresh)
        for line in fresh:
            budget = await _write(response, format_line(line, opts.timestamps), budget)
            if budget == 0:
                return await _done(response)
    return await _done(response)


async def _write(response: web.StreamResponse, data: bytes, budget: int | None) -> int | None:
    if budget is not None:
        data = data[:budget]
        budget -= len(data)
    await response.write(data)
    return budget


async def _done(response: web.StreamResponse) -> web.StreamResponse:
    await response.write_eof()
    return response
