"""A school's roster imported from CSV, with a per-line report; all or nothing per file."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from activities.pickup.contracts.board import PickupErrorCode
from activities.pickup.contracts.errors import pickup_error
from activities.pickup.operator import RosterReport
from services.api.routes.pickup import answers
from services.api.routes.pickup.deps import Actor
from services.app_context import PickupFace
from shared.errors import ErrorCode, EsteiraError
from shared.problem import refusal

router = APIRouter()

MAX_BYTES = 5 * 1024 * 1024


def _text(raw: bytes) -> str:
    # Spreadsheets in Brazil save UTF-8 (often with a BOM) or Windows-1252.
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")


def _answer(report: RosterReport) -> answers.RosterReport:
    return answers.RosterReport(dry_run=report.dry_run, written=report.written,
                                refused=report.refused,
                                summary=answers.RosterSummary(**report.summary),
                                lines=[answers.RosterLine(**line) for line in report.in_order])


@router.post("/schools/{school_id}/roster", response_model=answers.RosterReport,
             response_model_exclude_none=True, openapi_extra={
                 "requestBody": {"required": True,
                                 "content": {"text/csv": {"schema": {"type": "string"}}}}})
async def import_roster(school_id: int, request: Request, pickup: PickupFace, actor: Actor,
                        dry_run: bool = False) -> answers.RosterReport | JSONResponse:
    """Students (and their cards), guardians and links from CSV; a refused line (422)
    writes nothing."""
    raw = await request.body()
    if len(raw) > MAX_BYTES:
        return refusal(EsteiraError(ErrorCode.REQUEST_INVALID,
                                    f"A roster file is at most {MAX_BYTES} bytes."))
    report = await pickup.roster.import_roster(school_id=school_id, text=_text(raw),
                                               dry_run=dry_run, actor=actor)
    if report.refused:
        kept = ("the batches before it were written; send the file again to finish"
                if report.written else "nothing was written")
        error = pickup_error(PickupErrorCode.ROSTER_REFUSED,
                             f"{report.refused} line(s) refused; {kept}.")
        return refusal(error, report=_answer(report).model_dump(mode="json", by_alias=True,
                                                                exclude_none=True))
    return _answer(report)
