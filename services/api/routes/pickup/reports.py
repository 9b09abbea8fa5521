"""A school's day in numbers: the dismissal report as JSON, and as CSV for a spreadsheet."""

from __future__ import annotations

from datetime import date
from enum import StrEnum

from fastapi import APIRouter
from fastapi.responses import Response

from activities.pickup.operator import reports
from services.api.routes.pickup.deps import Sessions

router = APIRouter()
CSV_ANSWER = {200: {"content": {"text/csv": {}}, "description": "The report as CSV."}}


class CsvPart(StrEnum):
    """What the CSV holds: a line per student, or the day's figures."""

    STUDENTS = "students"
    SUMMARY = "summary"


@router.get("/schools/{school_id}/reports/dismissal", response_model=reports.DismissalReport)
async def dismissal_report(school_id: int, sessions: Sessions,
                           day: date | None = None) -> reports.DismissalReport:
    """Students picked up (by turnstile vs operator), arrival-to-pickup median and p90, READY
    timeouts, undone pickups and failed notifications of one school day (default: today)
    in the school's zone, from the audit trail."""
    return await reports.dismissal(sessions, school_id=school_id, day=day)


@router.get("/schools/{school_id}/reports/dismissal.csv", response_class=Response,
            responses=CSV_ANSWER)
async def dismissal_csv(school_id: int, sessions: Sessions, day: date | None = None,
                        part: CsvPart = CsvPart.STUDENTS) -> Response:
    """The same report as CSV: `part=students` (default) or `part=summary`."""
    report = await reports.dismissal(sessions, school_id=school_id, day=day)
    return csv_response(report, part)


def csv_response(report: reports.DismissalReport, part: str) -> Response:
    """The CSV as a download named after the school and day."""
    text = (reports.summary_csv(report) if part == CsvPart.SUMMARY
            else reports.students_csv(report))
    name = f"dismissal-{report.school_id}-{report.day.isoformat()}-{part}.csv"
    return Response(text, media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})
