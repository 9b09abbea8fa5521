"""The school's day in numbers: the dismissal report page and its CSV downloads."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from activities.pickup.operator import CsvPart
from services.app_context import PickupFace
from services.dashboard.web import render
from shared.db.models import as_utc
from shared.errors import ErrorCode, EsteiraError

router = APIRouter()
PARTS = tuple(part.value for part in CsvPart)


def _day(value: str | None) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise EsteiraError(ErrorCode.REQUEST_INVALID,
                           f"Not a day (YYYY-MM-DD): {value[:40]!r}.") from None


@router.get("/pickup/{school_id}/report", response_class=HTMLResponse, include_in_schema=False)
async def report_page(request: Request, school_id: int, pickup: PickupFace,
                      day: str | None = None) -> HTMLResponse:
    """One school day's dismissal report (default: today in the school's zone)."""
    try:
        school = await pickup.schools.get(school_id)
    except EsteiraError as exc:
        return render(request, "not_found.html", status_code=exc.status, error=exc)
    try:
        report = await pickup.reports.dismissal(school_id, day=_day(day))
    except EsteiraError as exc:
        # A day that is no date: the form again, saying why.
        return render(request, "pickup_report.html", status_code=exc.status, school=school,
                      report=None, error=exc, asked=day or "")
    zone = ZoneInfo(report.time_zone)
    return render(request, "pickup_report.html", school=school, report=report, error=None,
                  asked=report.day.isoformat(), local=lambda moment: _local(moment, zone),
                  duration=_duration)


@router.get("/pickup/{school_id}/report.csv", include_in_schema=False)
async def report_csv(school_id: int, pickup: PickupFace, day: str | None = None,
                     part: str = "students") -> Response:
    """The report as CSV: a line per student, or (`part=summary`) the day's figures."""
    try:
        if part not in PARTS:
            raise EsteiraError(ErrorCode.REQUEST_INVALID, f"part is one of {', '.join(PARTS)}.")
        report = await pickup.reports.dismissal(school_id, day=_day(day))
    except EsteiraError as exc:
        return Response(exc.message, status_code=exc.status, media_type="text/plain")
    name = pickup.reports.csv_name(report, CsvPart(part))
    return Response(pickup.reports.csv(report, CsvPart(part)),
                    media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})


def _local(moment: datetime | None, zone: ZoneInfo) -> str:
    return "—" if moment is None else as_utc(moment).astimezone(zone).strftime("%Y-%m-%d %H:%M:%S")


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{rest} s"
