"""Cron schedules as robfig/cron reads them: the next firing for standard fields, names, steps,
macros, the day-of-month/day-of-week OR rule, time zones (CRON_TZ=, TZ=, spec.timeZone, a DST
gap), and robfig's error texts."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from controllers import cron_schedule

UTC = timezone.utc
START = datetime(2026, 12, 4, 16, 50, 30, tzinfo=UTC)  # a Friday

NEXT = [
    ("every minute fires at the next whole minute", "*/1 * * * *", None, START, "2026-12-04T16:51:00+00:00"),
    ("a step over minutes fires at the next multiple", "*/15 * * * *", None, START, "2026-12-04T17:00:00+00:00"),
    ("@hourly is minute zero of the next hour", "@hourly", None, START, "2026-12-04T17:00:00+00:00"),
    ("@daily is the next midnight", "@daily", None, START, "2026-12-05T00:00:00+00:00"),
    ("@weekly is the next Sunday midnight", "@weekly", None, START, "2026-12-06T00:00:00+00:00"),
    ("@monthly is the first of next month", "@monthly", None, START, "2027-01-01T00:00:00+00:00"),
    ("@yearly is the next first of January", "@yearly", None, START, "2027-01-01T00:00:00+00:00"),
    ("an hour range includes its last hour", "0 9-17 * * MON-FRI", None, START, "2026-12-04T17:00:00+00:00"),
    ("weekday names skip the weekend", "0 9-16 * * MON-FRI", None, START, "2026-12-07T09:00:00+00:00"),
    ("month names are read", "0 0 1 FEB *", None, START, "2027-02-01T00:00:00+00:00"),
    ("a list takes the nearest member", "5,40 * * * *", None, START, "2026-12-04T17:05:00+00:00"),
    ("day of month and day of week are ORed when both are set", "0 0 13 * 5", None, START, "2026-12-11T00:00:00+00:00"),
    ("a starred day of week leaves the day of month alone", "0 0 13 * *", None, START, "2026-12-13T00:00:00+00:00"),
    ("N/step means N to the maximum", "10/20 * * * *", None, START, "2026-12-04T17:10:00+00:00"),
    ("spec.timeZone puts the wall clock in that zone", "0 9 * * *", "Asia/Tokyo", START, "2026-12-05T09:00:00+09:00"),
    ("CRON_TZ= in the schedule names the zone", "CRON_TZ=Europe/Berlin 0 18 * * *", None, START,
     "2026-12-04T18:00:00+01:00"),
    ("TZ= in the schedule names the zone", "TZ=America/New_York 0 12 * * *", None, START, "2026-12-04T12:00:00-05:00"),
    ("a wall time skipped by the spring DST jump does not fire that day", "30 2 * * *", "America/New_York",
     datetime(2026, 3, 8, 5, 0, tzinfo=UTC), "2026-03-09T02:30:00-04:00"),
    ("@every is a constant delay", "@every 90s", None, START, "2026-12-04T16:52:00+00:00"),
]


@pytest.mark.parametrize(("case", "text", "zone", "after", "want"), NEXT, ids=[c[0] for c in NEXT])
def test_next_firing(case: str, text: str, zone: str | None, after: datetime, want: str) -> None:
    got = cron_schedule.parse(text, zone).next_after(after)
    assert got is not None and got.isoformat() == want


def test_a_date_that_never_comes_has_no_next_firing() -> None:
    assert cron_schedule.parse("0 0 30 2 *").next_after(START) is None


ERRORS = [
    ("too few fields", "* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
    ("a minute past 59", "60 * * * *", "end of range (60) above maximum (59): 60"),
    ("a reversed range", "0 5-2 * * *", "beginning of range (5) beyond end of range (2): 5-2"),
    ("a word that is no name", "0 0 * * FUNDAY",
     'failed to parse int from FUNDAY: strconv.Atoi: parsing "FUNDAY": invalid syntax'),
    ("an unknown descriptor", "@fortnightly", "unrecognized descriptor: @fortnightly"),
    ("a zero step", "*/0 * * * *", "step of range should be a positive number: */0"),
    ("an unknown zone", "CRON_TZ=Mars/Olympus 0 0 * * *", "provided bad location Mars/Olympus: unknown time zone Mars/Olympus"),
]


@pytest.mark.parametrize(("case", "text", "message"), ERRORS, ids=[c[0] for c in ERRORS])
def test_schedule_errors_read_as_robfig_writes_them(case: str, text: str, message: str) -> None:
    with pytest.raises(cron_schedule.ScheduleError) as caught:
        cron_schedule.parse(text)
    assert str(caught.value) == message
