"""How long a Job waits before it replaces a failed pod: upstream's backoff_utils.go.

The delay doubles with every failure since the Job's last success: base × 2^(n−1), capped
(upstream's DefaultJobPodFailureBackOff 10 s and MaxJobPodFailureBackOff 10 min; the docs say
six minutes, the code says ten). `Record` is what the controller remembers per Job; tests pass a
smaller base and cap through the controller's settings. Used by `job.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

BASE = 10.0
CAP = 600.0


def delay(failures: int, base: float = BASE, cap: float = CAP) -> float:
    """The wait after the `failures`-th consecutive failure (0 failures: no wait)."""
    if failures <= 0:
        return 0.0
    # Doubling past the cap is pointless and could overflow for huge counts.
    wait = base
    for _ in range(failures - 1):
        wait *= 2
        if wait >= cap:
            return cap
    return min(wait, cap)


@dataclass
class Record:
    failures_after_success: int = 0
    last_failure: float | None = None

    def update(self, finished: list[tuple[bool, float]]) -> None:
        """Fold in newly counted pods, `(succeeded, finish time)`, oldest first."""
        for succeeded, when in sorted(finished, key=lambda item: item[1]):
            if succeeded:
                self.failures_after_success, self.last_failure = 0, None
            else:
                self.failures_after_success += 1
                self.last_failure = when if self.last_failure is None else max(self.last_failure, when)

    def remaining(self, now: float, base: float = BASE, cap: float = CAP) -> float:
        """Seconds still to wait before creating a replacement (0 when none)."""
        if self.last_failure is None or self.failures_after_success == 0:
            return 0.0
        return max(0.0, self.last_failure + delay(self.failures_after_success, base, cap) - now)
