"""nodes/kubelet/crash_backoff.py: restart at once, then 10 s doubling to 5 min, on a given clock."""

from __future__ import annotations

from nodes.kubelet import crash_backoff


def test_first_exit_restarts_at_once_then_waits_10s_doubling_to_five_minutes() -> None:
    backoff = crash_backoff.CrashBackoff()
    now = 0.0
    assert backoff.in_backoff("c", finished=now, now=now) == 0  # first exit: restart now, arm 10 s
    waits = []
    for _ in range(8):
        now += 1  # the container ran a second and failed again
        wait = backoff.in_backoff("c", finished=now, now=now)
        waits.append(wait)
        now += wait
        assert backoff.in_backoff("c", finished=now - wait, now=now) == 0  # waited out: restart, grow
    assert waits == [10, 20, 40, 80, 160, 300, 300, 300]


def test_a_container_quiet_for_long_starts_over() -> None:
    backoff = crash_backoff.CrashBackoff()
    backoff.in_backoff("c", 0, 0)
    assert backoff.in_backoff("c", 5, 5) == 10
    assert backoff.in_backoff("c", 1000, 1000) == 0
    assert backoff.current("c") == 10


def test_the_message_is_the_kubelets() -> None:
    assert crash_backoff.message(10, "app", "web", "default", "u-1") == \
        "back-off 10s restarting failed container=app pod=web_default(u-1)"
    assert crash_backoff.duration(300) == "5m0s" and crash_backoff.duration(80) == "1m20s"
