"""Whether an Indexed Job's `successPolicy` is met: upstream's success_policy.go.

A rule with `succeededIndexes` holds when enough of those indexes succeeded — all of them, or
`succeededCount` of them when that is set; a rule with only `succeededCount` holds when that many
indexes succeeded at all. The first rule that holds gives the SuccessCriteriaMet message
"Matched rules at index N". Pure; used by `job.py`.
"""

from __future__ import annotations

from typing import Any

from controllers import job_indexes

REASON = "SuccessPolicy"


def matched(policy: dict[str, Any] | None, completions: int, succeeded: set[int]) -> str | None:
    """The SuccessCriteriaMet message, or None while no rule holds."""
    if not policy:
        return None
    for i, rule in enumerate(policy.get("rules") or []):
        count = rule.get("succeededCount")
        if rule.get("succeededIndexes") is not None:
            wanted = job_indexes.parse(rule["succeededIndexes"], completions)
            done = len(wanted & succeeded)
            holds = done >= count if count is not None else bool(wanted) and done == len(wanted)
        else:
            holds = count is not None and len(succeeded) >= count
        if holds:
            return f"Matched rules at index {i}"
    return None
