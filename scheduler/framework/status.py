"""`Status`: the coded outcome of a plugin call, upstream's `fwk.Status`.

Every extension point answers `Status | None`; `None` is success, as upstream's nil is, so the
hot path (Filter on thousands of nodes) allocates nothing when a node fits. The code tells the
queue what to do with a rejected pod (see `Code`). Exceptions in a plugin are bugs: the cycle
turns them into `Code.ERROR`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Code(enum.IntEnum):
    SUCCESS = 0
    # An internal failure; the pod goes to backoff and is retried whatever happens in the cluster.
    ERROR = 1
    # The node does not fit now; preemption may help, and a cluster event can make it fit.
    UNSCHEDULABLE = 2
    # The node cannot fit whatever preemption does (a node selector, a taint without toleration).
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    # Permit: hold the pod until another plugin allows or rejects it.
    WAIT = 4
    # The plugin has nothing to do for this pod; its later points are skipped for it.
    SKIP = 5
    # Waiting on something outside the scheduler (a claim's binding conditions); retried when the
    # plugin's events fire, without backoff counting against the pod.
    PENDING = 6


_REJECTED = (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)


@dataclass
class Status:
    code: Code
    reasons: list[str] = field(default_factory=list)
    plugin: str = ""  # set by the framework when it records which plugin answered
    error: BaseException | None = None

    @classmethod
    def unschedulable(cls, *reasons: str) -> "Status":
        return cls(Code.UNSCHEDULABLE, list(reasons))

    @classmethod
    def unresolvable(cls, *reasons: str) -> "Status":
        return cls(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, list(reasons))

    @classmethod
    def as_error(cls, error: BaseException | str) -> "Status":
        exc = error if isinstance(error, BaseException) else RuntimeError(error)
        return cls(Code.ERROR, [str(exc)], error=exc)

    @classmethod
    def skip(cls) -> "Status":
        return cls(Code.SKIP)

    @classmethod
    def wait(cls, *reasons: str) -> "Status":
        return cls(Code.WAIT, list(reasons))

    @classmethod
    def pending(cls, *reasons: str) -> "Status":
        return cls(Code.PENDING, list(reasons))

    def with_plugin(self, plugin: str) -> "Status":
        self.plugin = plugin
        return self

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    # The pod cannot go on in this cycle, and the queue should wait for an event. Worked out once
    # (a status's code never changes after it is made): a cycle asks it of every node that turned
    # the pod down, thousands per attempt for a pod that must preempt.
    rejected: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.rejected = self.code in _REJECTED


def is_success(status: Status | None) -> bool:
    return status is None or status.code is Code.SUCCESS


def code_of(status: Status | None) -> Code:
    return Code.SUCCESS if status is None else status.code
