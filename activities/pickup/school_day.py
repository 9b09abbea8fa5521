"""A school's day on the calendar: which day an instant belongs to, and when a day starts.

A school day starts at the school's `day_start` ("HH:MM") in its `time_zone`; an instant
before that time of day still belongs to the previous day. Days are computed, never stored
per row: the audit of a day is the rows whose UTC timestamp falls inside its bounds.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo


def start_time(day_start: str) -> time:
    """"HH:MM" as a time of day."""
    hours, minutes = day_start.split(":")
    return time(int(hours), int(minutes))


def school_day_of(instant: datetime, zone: str, day_start: str) -> date:
    """The school day `instant` (aware) belongs to, in the school's zone."""
    local = instant.astimezone(ZoneInfo(zone))
    if local.time().replace(tzinfo=None) >= start_time(day_start):
        return local.date()
    return local.date() - timedelta(days=1)


def day_begins(day: date, zone: str, day_start: str) -> datetime:
    """The UTC instant `day` starts.

    A start inside a DST gap (a zone whose clocks jump over 00:00) is read with the offset
    before the jump, which is exactly the first instant of the day that exists.
    """
    local = datetime.combine(day, start_time(day_start), tzinfo=ZoneInfo(zone))
    return local.astimezone(UTC)


def day_bounds(day: date, zone: str, day_start: str) -> tuple[datetime, datetime]:
    """[start, end) of `day` in UTC: 23, 24 or 25 hours long."""
    return (day_begins(day, zone, day_start),
            day_begins(day + timedelta(days=1), zone, day_start))
