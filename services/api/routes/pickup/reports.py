"""A school's day in numbers: the dismissal report as JSON, and as CSV for a spreadsheet."""

from __future__ import annotations

from datetime import date, datetime

from fastapi import APIRouter
from fastapi.responses import Response

from activities.pickup.operator import CsvPart
from services.app_context import PickupFace
from shared.wire import WireModel

router = APIRouter()
CSV_ANSWER = {200: {"content": {"text/csv": {"schema": {"type": "string"}}},
                    "description": "The report as CSV."}}


class StudentDismissal(WireModel):
    """One student's day: the standing pickup, if any, and what went wrong."""

    student_id: int
    name: str | None
    registration: str | None
    arrival_signalled_at: datetime | None
    picked_up_at: datetime | None
    # `turnstile` or `operator`; null without a standing pickup.
    origin: str | None
    arrival_to_pickup_seconds: float | None
    ready_timeouts: int
    pickups_undone: int
    notification_failures: int


class PickupsByOrigin(WireModel):
    """Standing pickups by who closed them."""

    turnstile: int
    operator: int


class ArrivalToPickup(WireModel):
    """Seconds from the arrival signal to the pickup: the median and the p90 (nearest rank)
    of the `timed` pickups."""

    timed: int
    median_seconds: float | None
    p90_seconds: float | None


class DismissalReport(WireModel):
    """One school day (`startsAt` to `endsAt` in the school's zone) in numbers."""

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


@router.get("/schools/{school_id}/reports/dismissal", response_model=DismissalReport)
async def dismissal_report(school_id: int, pickup: PickupFace,
                           day: date | None = None) -> DismissalReport:
    """Students picked up (by turnstile vs operator), arrival-to-pickup median and p90, READY
    timeouts, undone pickups and failed notifications of one school day (default: today)
    in the school's zone, from the audit trail."""
    return DismissalReport.model_validate(await pickup.reports.dismissal(school_id, day=day))


@router.get("/schools/{school_id}/reports/dismissal.csv", response_class=Response,
            responses=CSV_ANSWER)
async def dismissal_csv(school_id: int, pickup: PickupFace, day: date | None = None,
                        part: CsvPart = CsvPart.STUDENTS) -> Response:
    """The same report as CSV: `part=students` (default) or `part=summary`."""
    report = await pickup.reports.dismissal(school_id, day=day)
    name = pickup.reports.csv_name(report, part)
    return Response(pickup.reports.csv(report, part), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})
