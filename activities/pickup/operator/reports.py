"""A school's daily dismissal report, as the doors ask for it: the report, and its CSV."""

from __future__ import annotations

import csv
import io
from datetime import date, datetime
from enum import StrEnum
from zoneinfo import ZoneInfo

from sqlmodel import and_, or_, select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup import dismissal_report as report
from activities.pickup.errors import not_found
from activities.pickup.models import AuditEntry, Notification, School, Student
from activities.pickup.school_day import day_bounds, school_day_of
from shared.db.engine import Sessions
from shared.db.models import as_utc, utcnow
from shared.errors import ErrorCode, EsteiraError

DismissalReport = report.DismissalReport
A = AuditEntry
# A cell a spreadsheet would run as a formula starts with one of these (OWASP, "CSV
# Injection"): such a cell gets a leading apostrophe.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


class CsvPart(StrEnum):
    """What the report's CSV holds: a line per student, or the day's figures."""

    STUDENTS = "students"
    SUMMARY = "summary"


class DismissalReports:
    """One school day in numbers, read from the audit trail in the school's zone."""

    def __init__(self, sessions: Sessions) -> None:
        self._sessions = sessions

    async def dismissal(self, school_id: int, *, day: date | None = None) -> DismissalReport:
        """The report of `day` (default: the school's current day) in the school's zone."""
        async with self._sessions() as session:
            school = await session.get(School, school_id)
            if school is None:
                raise not_found("School", school_id)
            day = day or school_day_of(utcnow(), school.time_zone, school.day_start)
            try:
                start, end = day_bounds(day, school.time_zone, school.day_start)
            except OverflowError:  # 9999-12-31 has no next day
                raise EsteiraError(ErrorCode.REQUEST_INVALID, f"No school day {day}.") from None
            rows = await _student_rows(session, school_id, start, end)
            rows += await _failed_notifications(session, school_id, start, end)
            names = await _names(session, {row.student_id for row in rows})
        return report.build(school_id=school_id, day=day, time_zone=school.time_zone,
                            starts_at=start, ends_at=end, rows=rows, names=names)

    @staticmethod
    def csv(day: DismissalReport, part: CsvPart = CsvPart.STUDENTS) -> str:
        """The report as CSV: a line per student (`students`), or the day's figures
        (`summary`)."""
        return summary_csv(day) if part == CsvPart.SUMMARY else students_csv(day)

    @staticmethod
    def csv_name(day: DismissalReport, part: CsvPart = CsvPart.STUDENTS) -> str:
        """The CSV's file name: the school, the day, the part."""
        return f"dismissal-{day.school_id}-{day.day.isoformat()}-{part.value}.csv"


async def _student_rows(session: AsyncSession, school_id: int, start: datetime,
                        end: datetime) -> list[report.Row]:
    found = await session.exec(select(A).where(
        A.school_id == school_id, A.entity == "student", A.action.in_(report.STUDENT_ACTIONS),
        A.at >= start, A.at < end).order_by(A.at, A.id))
    return [report.Row(at=as_utc(row.at), student_id=row.entity_id, action=row.action,
                       origin=report.origin_of(row.details, row.reason)
                       if row.action == report.PICKED_UP else None) for row in found.all()]


async def _failed_notifications(session: AsyncSession, school_id: int, start: datetime,
                                end: datetime) -> list[report.Row]:
    """Notifications given up on that day about the school's students (rows written before
    the failure carried its school are matched through the student)."""
    of_school = select(Student.id).where(Student.school_id == school_id)
    found = await session.exec(
        select(A.at, Notification.student_id).join(Notification, Notification.id == A.entity_id)
        .where(A.entity == "notification", A.action == report.NOTIFICATION_FAILED,
               A.at >= start, A.at < end,
               or_(A.school_id == school_id,
                   and_(A.school_id.is_(None), Notification.student_id.in_(of_school))))
        .order_by(A.at, A.id))
    return [report.Row(at=as_utc(at), student_id=student_id, action=report.NOTIFICATION_FAILED)
            for at, student_id in found.all()]


async def _names(session: AsyncSession, ids: set[int]) -> dict[int, report.Named]:
    if not ids:
        return {}
    found = await session.exec(select(Student.id, Student.name, Student.registration)
                               .where(Student.id.in_(sorted(ids))))
    names = {}
    for sid, name, registration in found.all():
        if sid is not None:
            names[sid] = report.Named(name, registration)
    return names


STUDENT_COLUMNS = ("student_id", "registration", "name", "arrival_signalled_at",
                   "picked_up_at", "origin", "arrival_to_pickup_seconds", "ready_timeouts",
                   "pickups_undone", "notification_failures")


def students_csv(day: DismissalReport) -> str:
    """One line per student with anything that day; times in the school's zone."""
    zone = ZoneInfo(day.time_zone)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(STUDENT_COLUMNS)
    for s in day.students:
        writer.writerow([s.student_id, _cell(s.registration), _cell(s.name),
                         _local(s.arrival_signalled_at, zone), _local(s.picked_up_at, zone),
                         s.origin or "", _number(s.arrival_to_pickup_seconds), s.ready_timeouts,
                         s.pickups_undone, s.notification_failures])
    return out.getvalue()


def summary_csv(day: DismissalReport) -> str:
    """The day's figures, one `metric,value` line each."""
    rows = [("school_id", day.school_id), ("day", day.day.isoformat()),
            ("time_zone", day.time_zone),
            ("starts_at", _local(day.starts_at, ZoneInfo(day.time_zone))),
            ("ends_at", _local(day.ends_at, ZoneInfo(day.time_zone))),
            ("students_picked_up", day.students_picked_up),
            ("picked_up_by_turnstile", day.picked_up_by.turnstile),
            ("picked_up_by_operator", day.picked_up_by.operator),
            ("arrival_to_pickup_timed", day.arrival_to_pickup.timed),
            ("arrival_to_pickup_median_seconds", _number(day.arrival_to_pickup.median_seconds)),
            ("arrival_to_pickup_p90_seconds", _number(day.arrival_to_pickup.p90_seconds)),
            ("ready_timeouts", day.ready_timeouts), ("pickups_undone", day.pickups_undone),
            ("notification_failures", day.notification_failures)]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(("metric", "value"))
    writer.writerows(rows)
    return out.getvalue()


def _cell(value: str | None) -> str:
    if not value:
        return ""
    return f"'{value}" if value.startswith(FORMULA_START) else value


def _local(moment: datetime | None, zone: ZoneInfo) -> str:
    return "" if moment is None else as_utc(moment).astimezone(zone).isoformat()


def _number(value: float | None) -> str:
    # Plain decimals (a spreadsheet reads "1e+06" as text in some locales).
    return "" if value is None else f"{value:.3f}".rstrip("0").rstrip(".")
