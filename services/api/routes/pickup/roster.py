"""A school's roster imported from CSV, with a per-line report; all or nothing per file."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from activities.pickup.contracts.board import PickupErrorCode
from activities.pickup.contracts.errors import pickup_error
from activities.pickup.operator import roster
from services.api.routes.pickup.deps import Actor, Kick, Pickup, Sessions
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


@router.post("/schools/{school_id}/roster", response_model=None, openapi_extra={
    "requestBody": {"required": True, "content": {"text/csv": {"schema": {"type": "string"}}}}})
async def import_roster(school_id: int, request: Request, sessions: Sessions, actor: Actor,
                        kick: Kick, pickup: Pickup,
                        dry_run: bool = False) -> dict[str, Any] | JSONResponse:
    """Students (and their cards), guardians and links from CSV; a refused line (422)
    writes nothing."""
    raw = await request.body()
    if len(raw) > MAX_BYTES:
        return refusal(EsteiraError(ErrorCode.REQUEST_INVALID,
                                    f"A roster file is at most {MAX_BYTES} bytes."))
    report = await roster.import_roster(sessions, school_id=school_id, text=_text(raw),
                                        dry_run=dry_run, actor=actor, kicker=kick,
                                        ready_timeout=timedelta(
                                            minutes=pickup.ready_timeout_minutes),
                                        batch_lines=pickup.roster_batch_lines)
    if report.refused:
        kept = ("the batches before it were written; send the file again to finish"
                if report.written else "nothing was written")
        error = pickup_error(PickupErrorCode.ROSTER_REFUSED,
                             f"{report.refused} line(s) refused; {kept}.")
        return refusal(error, report=report.as_dict())
    return report.as_dict()
