"""The configuration in force: FlowSchemas in matching order and the priority levels' seats.

Built from the stored FlowSchema and PriorityLevelConfiguration objects each time either changes
(`maintenance.py` calls `Config.apply`). Seats, as upstream computes them: the server's total
(`--max-requests-inflight` + `--max-mutating-requests-inflight`, 400 + 200) is split among the
levels in proportion to `nominalConcurrencyShares`, NominalCL = ceil(total × shares / Σ shares),
the exempt level's shares counted in Σ. (Borrowing between levels, `lendablePercent`, is not done:
each level runs at its nominal limit.) FlowSchemas are tried in ascending `matchingPrecedence`,
ties by name; one naming a level that does not exist is *dangling* and skipped. A level keeps its
live `queueset.Level` across reconfigurations, so requests running or waiting there are not lost.
`classify()` answers which schema and level a request belongs to (and the pair's counters);
`filter.py` calls it.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any

from apiserver.flowcontrol import matching, queueset

MAX_REQUESTS_INFLIGHT = 400
MAX_MUTATING_REQUESTS_INFLIGHT = 200
WAIT_LIMIT = 15.0  # seconds in a queue: a quarter of the 60 s request timeout, as upstream


@dataclass(frozen=True)
class Schema:
    name: str
    uid: str
    level_name: str
    precedence: int
    distinguisher: str  # "ByUser", "ByNamespace" or ""
    rules: tuple[matching.Rule, ...]


@dataclass(frozen=True)
class LevelInfo:
    name: str
    uid: str
    shares: int
    nominal: int
    state: queueset.Level


class FlowStats:
    """Counters of one (flow schema, priority level) pair, for /metrics; shared by every request
    classified there, kept across reconfigurations."""

    __slots__ = ("dispatched", "executing", "waiting", "rejected")

    def __init__(self) -> None:
        self.dispatched = self.executing = self.waiting = 0
        self.rejected: dict[str, int] = {}


@dataclass(frozen=True)
class Classification:
    schema: Schema
    level: LevelInfo
    flow_hash: int
    stats: FlowStats


class Config:
    def __init__(self, server_limit: int = MAX_REQUESTS_INFLIGHT + MAX_MUTATING_REQUESTS_INFLIGHT,
                 wait_limit: float = WAIT_LIMIT) -> None:
        self.server_limit = server_limit
        self.wait_limit = wait_limit
        self.schemas: tuple[Schema, ...] = ()
        self.levels: dict[str, LevelInfo] = {}
        self._states: dict[str, queueset.Level] = {}
        self._cache: dict[tuple[Any, ...], Classification | None] = {}
        self._hashes: dict[tuple[str, str], int] = {}
        self.stats: dict[tuple[str, str], FlowStats] = {}

    def apply(self, schemas: list[dict[str, Any]], levels: list[dict[str, Any]]) -> set[str]:
        """Take these objects as the configuration; returns the names of the dangling FlowSchemas."""
        specs = {obj["metadata"]["name"]: obj for obj in levels}
        total = sum(_shares(obj.get("spec") or {}) for obj in specs.values()) or 1
        new_levels: dict[str, LevelInfo] = {}
        for name, obj in specs.items():
            spec = obj.get("spec") or {}
            shares = _shares(spec)
            exempt = spec.get("type") == "Exempt"
            nominal = math.ceil(self.server_limit * shares / total)
            queuing = ((spec.get("limited") or {}).get("limitResponse") or {}).get("queuing") or {}
            if ((spec.get("limited") or {}).get("limitResponse") or {}).get("type") != "Queue":
                queuing = {}
            shape = dict(limit=nominal, exempt=exempt, queues=int(queuing.get("queues", 0) or 0),
                         hand_size=int(queuing.get("handSize", 0) or 0),
                         queue_length_limit=int(queuing.get("queueLengthLimit", 0) or 0), wait_limit=self.wait_limit)
            state = self._states.get(name)
            if state is None:
                state = self._states[name] = queueset.Level(name, **shape)
            else:
                state.configure(**shape)
            new_levels[name] = LevelInfo(name, obj["metadata"].get("uid", ""), shares, nominal, state)
        for gone in set(self._states) - set(new_levels):
            self._states[gone].configure(limit=self._states[gone].limit, exempt=True, queues=0, hand_size=0,
                                         queue_length_limit=0, wait_limit=self.wait_limit)  # let waiters in
            del self._states[gone]
        compiled, dangling = [], set()
        for obj in schemas:
            spec = obj.get("spec") or {}
            name = obj["metadata"]["name"]
            level = (spec.get("priorityLevelConfiguration") or {}).get("name", "")
            if level not in new_levels:
                dangling.add(name)
                continue
            compiled.append(Schema(name, obj["metadata"].get("uid", ""), level,
                                   int(spec.get("matchingPrecedence") or 1000),
                                   (spec.get("distinguisherMethod") or {}).get("type", "") or "",
                                   matching.compile_rules(spec.get("rules"))))
        compiled.sort(key=lambda s: (s.precedence, s.name))
        self.schemas = tuple(compiled)
        self.levels = new_levels
        self._cache.clear()
        return dangling

    def classify(self, user: Any, info: Any) -> Classification | None:
        """The first matching FlowSchema and its level for a request (its `auth.User` and
        `requestinfo.RequestInfo`); None: nothing matches, not even catch-all. Answers are cached
        per distinct (user, groups, verb, resource, namespace or path) until the next `apply`."""
        key = (user.name, user.groups, info.is_resource, info.verb, info.group, info.resource, info.subresource,
               info.namespace, info.path if not info.is_resource else "")
        try:
            return self._cache[key]
        except KeyError:
            pass
        found = self._match(digest(user, info))
        if len(self._cache) > 20_000:
            self._cache.clear()
        self._cache[key] = found
        return found

    def _match(self, request: matching.Request) -> Classification | None:
        for schema in self.schemas:
            if any(rule.matches(request) for rule in schema.rules):
                distinguisher = (request.user if schema.distinguisher == "ByUser" else
                                 request.namespace if schema.distinguisher == "ByNamespace" else "")
                stats = self.stats.setdefault((schema.name, schema.level_name), FlowStats())
                return Classification(schema, self.levels[schema.level_name],
                                      self._flow_hash(schema.name, distinguisher), stats)
        return None

    def _flow_hash(self, schema: str, distinguisher: str) -> int:
        key = (schema, distinguisher)
        value = self._hashes.get(key)
        if value is None:
            if len(self._hashes) > 20_000:
                self._hashes.clear()
            digest = hashlib.sha256(schema.encode() + b"\0" + distinguisher.encode()).digest()
            value = self._hashes[key] = int.from_bytes(digest[:8], "big")
        return value


def digest(user: Any, info: Any) -> matching.Request:
    """What classification looks at in a request (its `auth.User` and `requestinfo.RequestInfo`)."""
    if info.is_resource:
        resource = f"{info.resource}/{info.subresource}" if info.subresource else info.resource
        return matching.Request(user.name, tuple(user.groups), True, info.verb, info.group, resource, info.namespace)
    return matching.Request(user.name, tuple(user.groups), False, info.verb, path=info.path)


def _shares(spec: dict[str, Any]) -> int:
    part = spec.get("limited") if spec.get("type") != "Exempt" else spec.get("exempt")
    value = (part or {}).get("nominalConcurrencyShares")
    if value is None:  # upstream's default for a Limited level; 0 for Exempt
        return 30 if spec.get("type") != "Exempt" else 0
    return int(value)
