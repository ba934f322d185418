"""The `apiserver_flowcontrol_*` metrics on the API server's /metrics, rendered at scrape time.

Upstream's names and labels: dispatched and rejected totals per (flow_schema, priority_level)
(rejections also by reason: queue-full, concurrency-limit, time-out), requests executing and
waiting now per (flow_schema, priority_level), and per level the seats in use and its nominal
limit. Counters live in `config.FlowStats` (one per pair) and the levels; `app.py` appends this text.
"""

from __future__ import annotations

from apiserver.flowcontrol.filter import FlowControl


def render(fc: FlowControl) -> str:
    lines: list[str] = []

    def family(name: str, kind: str, help_text: str, rows: list[tuple[str, int]]) -> None:
        lines.append(f"# HELP {name} {help_text}")
        lines.append(f"# TYPE {name} {kind}")
        lines.extend(f"{name}{{{labels}}} {value}" for labels, value in sorted(rows))

    def pair(key: tuple[str, str]) -> str:
        return f'flow_schema="{key[0]}",priority_level="{key[1]}"'

    flows = fc.config.stats.items()
    family("apiserver_flowcontrol_dispatched_requests_total", "counter",
           "[BETA] Number of requests executed by API Priority and Fairness subsystem",
           [(pair(k), v.dispatched) for k, v in flows])
    family("apiserver_flowcontrol_rejected_requests_total", "counter",
           "[BETA] Number of requests rejected by API Priority and Fairness subsystem",
           [(f'{pair(k)},reason="{reason}"', n) for k, v in flows for reason, n in v.rejected.items()])
    family("apiserver_flowcontrol_current_executing_requests", "gauge",
           "[BETA] Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the "
           "API Priority and Fairness subsystem", [(pair(k), v.executing) for k, v in flows])
    family("apiserver_flowcontrol_current_inqueue_requests", "gauge",
           "[BETA] Number of requests currently pending in queues of the API Priority and Fairness subsystem",
           [(pair(k), v.waiting) for k, v in flows])
    levels = fc.config.levels.values()
    family("apiserver_flowcontrol_current_executing_seats", "gauge",
           "[BETA] Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, "
           "any stage otherwise) requests in the API Priority and Fairness subsystem",
           [(f'priority_level="{lv.name}"', lv.state.executing_seats) for lv in levels])
    family("apiserver_flowcontrol_nominal_limit_seats", "gauge",
           "[BETA] Nominal number of execution seats configured for each priority level",
           [(f'priority_level="{lv.name}"', lv.nominal) for lv in levels])
    return "\n".join(lines) + "\n"
