"""A school's dismissal in numbers, computed from one school day of the audit trail.

Per student, the day's rows are played in order: an arrival signal starts the clock, a
pickup (`picked-up`, origin `turnstile` or `operator`) stands unless staff undo it
(`pickup-undone`), a READY timeout (`ready-reverted`) or an expired arrival signal
(`awaiting-reverted`) stops the clock. A standing pickup counts; its time from the arrival
signal before it, when there was one that day, enters the median and the p90.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime

from pydantic import BaseModel

ARRIVAL = "arrival-signalled"
PICKED_UP = "picked-up"
UNDONE = "pickup-undone"
READY_TIMEOUT = "ready-reverted"
ARRIVAL_TIMEOUT = "awaiting-reverted"
NOTIFICATION_FAILED = "notification-failed"
STUDENT_ACTIONS = (ARRIVAL, PICKED_UP, UNDONE, READY_TIMEOUT, ARRIVAL_TIMEOUT)
# Pickups written before the origin was recorded: the turnstile's reason tells them apart.
TURNSTILE_REASON = "saída na catraca"
ORIGINS = ("turnstile", "operator")


@dataclass(frozen=True)
class Row:
    """One audit row as the report reads it."""

    at: datetime
    student_id: int
    action: str
    origin: str | None = None


@dataclass(frozen=True)
class Named:
    """A student's name and registration, if the record still exists."""

    name: str | None
    registration: str | None


class StudentDismissal(BaseModel):
    """One student's day: the standing pickup, if any, and what went wrong."""

    student_id: int
    name: str | None
    registration: str | None
    arrival_signalled_at: datetime | None
    picked_up_at: datetime | None
    origin: str | None
    arrival_to_pickup_seconds: float | None
    ready_timeouts: int
    pickups_undone: int
    notification_failures: int


class PickupsByOrigin(BaseModel):
    """Standing pickups by who closed them."""

    turnstile: int
    operator: int


class ArrivalToPickup(BaseModel):
    """Seconds from the arrival signal to the pickup: the median and the p90 (nearest rank:
    the smallest time at least 90 % of the timed pickups did not exceed)."""

    timed: int
    median_seconds: float | None
    p90_seconds: float | None


class DismissalReport(BaseModel):
    """`GET /schools/{id}/reports/dismissal`: one school day, in the school's zone."""

    school_id: int
    day: date
    time_zone: str
    starts_at: datetime
    ends_at: datetime
    students_picked_up: int
    picked_up_by: PickupsByOrigin
    arrival_to_pickup: ArrivalToPickup
    ready_timeouts: int
    pickups_undone: int
    notification_failures: int
    students: list[StudentDismissal]


def percentile(values: list[float], share: float) -> float | None:
    """Nearest-rank percentile of `values` (None when empty)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(1, math.ceil(share * len(ordered))) - 1]


@dataclass
class _Day:
    """One student's rows played in order."""

    arrival: datetime | None = None
    pickup: tuple[datetime, str, datetime | None] | None = None
    timeouts: int = 0
    undone: int = 0
    failures: int = 0

    def play(self, row: Row) -> None:
        if row.action == ARRIVAL:
            self.arrival = row.at
        elif row.action == PICKED_UP:
            self.pickup = (row.at, row.origin or "operator", self.arrival)
        elif row.action == UNDONE:
            self.undone += 1
            self.pickup = None
        elif row.action in (READY_TIMEOUT, ARRIVAL_TIMEOUT):
            self.timeouts += row.action == READY_TIMEOUT
            self.arrival = None
        elif row.action == NOTIFICATION_FAILED:
            self.failures += 1


def origin_of(details: dict, reason: str | None) -> str:
    """`turnstile` or `operator`, from the row's details (or, for old rows, its reason)."""
    origin = details.get("origin")
    if origin in ORIGINS:
        return str(origin)
    return "turnstile" if reason == TURNSTILE_REASON else "operator"


def build(*, school_id: int, day: date, time_zone: str, starts_at: datetime,
          ends_at: datetime, rows: Iterable[Row], names: dict[int, Named]) -> DismissalReport:
    """The report of the rows of one day (in time order)."""
    days: dict[int, _Day] = {}
    for row in sorted(rows, key=lambda r: r.at):
        days.setdefault(row.student_id, _Day()).play(row)
    students, times = [], []
    by = dict.fromkeys(ORIGINS, 0)
    for student_id in sorted(days):
        played, named = days[student_id], names.get(student_id, Named(None, None))
        at, origin, arrival = played.pickup or (None, None, played.arrival)
        took = (at - arrival).total_seconds() if at is not None and arrival is not None \
            else None
        if origin is not None:
            by[origin] += 1
        if took is not None:
            times.append(took)
        students.append(StudentDismissal(
            student_id=student_id, name=named.name, registration=named.registration,
            arrival_signalled_at=arrival, picked_up_at=at, origin=origin,
            arrival_to_pickup_seconds=took, ready_timeouts=played.timeouts,
            pickups_undone=played.undone, notification_failures=played.failures))
    return DismissalReport(
        school_id=school_id, day=day, time_zone=time_zone, starts_at=starts_at,
        ends_at=ends_at, students_picked_up=sum(by.values()),
        picked_up_by=PickupsByOrigin(**by),
        arrival_to_pickup=ArrivalToPickup(
            timed=len(times), median_seconds=statistics.median(times) if times else None,
            p90_seconds=percentile(times, 0.9)),
        ready_timeouts=sum(s.ready_timeouts for s in students),
        pickups_undone=sum(s.pickups_undone for s in students),
        notification_failures=sum(s.notification_failures for s in students),
        students=students)
