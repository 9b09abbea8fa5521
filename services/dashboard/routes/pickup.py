"""Pickup: the schools and the outbound queues' day, a live board per school, and staff's
actions on its cards."""

from __future__ import annotations

from datetime import timedelta

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse

from activities.pickup.contracts.board import (
    ARRIVAL_TIMEOUT_REASON,
    READY_TIMEOUT_REASON,
    PickupErrorCode,
)
from activities.pickup.models import Student
from activities.pickup.operator import admin, queues
from activities.pickup.operator import board as operations
from activities.pickup.operator import events as feed
from activities.pickup.operator.kicker import Kicker
from services.api.routes.pickup import events as rest_events
from services.app_context import ApiContext
from services.dashboard.guard import CheckedForm, actor
from services.dashboard.web import TEMPLATES, context, redirect, render
from shared.db.models import utcnow
from shared.errors import ErrorCode, EsteiraError

router = APIRouter()


@router.get("/pickup", response_class=HTMLResponse, include_in_schema=False)
async def schools_page(request: Request) -> HTMLResponse:
    """Every school, each linking to its board, and the outbound queues over the day."""
    sessions = context(request).sessions
    schools = await admin.list_schools(sessions)
    charts = await queues.queue_charts(sessions, now=utcnow())
    return render(request, "pickup.html", schools=schools, charts=charts)


@router.get("/pickup/{school_id}", response_class=HTMLResponse, include_in_schema=False)
async def board_page(request: Request, school_id: int) -> HTMLResponse:
    """The school's board; the page subscribes to `/pickup/{id}/events` from what it shows."""
    sessions = context(request).sessions
    try:
        # The newest event first: the stream replays anything that lands while the board loads.
        after = await feed.newest_event_id(sessions)
        school, students = await operations.school_board(sessions, school_id)
    except EsteiraError as exc:
        return render(request, "not_found.html", status_code=exc.status, error=exc)
    return render(request, "pickup_board.html", school=school, school_id=school.id, after=after,
                  cards=[_card(s) for s in students], **_reasons())


@router.get("/pickup/{school_id}/events", include_in_schema=False)
async def board_events(request: Request, school_id: int,
                       after: int | None = None) -> StreamingResponse:
    """The REST SSE stream, reachable with the operator's cookie (EventSource sends no
    headers, so it can't carry the API key)."""
    ctx = context(request)
    return await rest_events.board_events(
        school_id, request, ctx.sessions, ctx.settings.pickup,
        last_event_id=request.headers.get("Last-Event-ID"), after=after)


@router.get("/pickup/{school_id}/students/{student_id}/card", response_class=HTMLResponse,
            include_in_schema=False)
async def card(request: Request, school_id: int, student_id: int) -> HTMLResponse:
    """One card as the board shows it now (the page swaps it in after a change)."""
    try:
        student = await _student_of(context(request), school_id, student_id)
    except EsteiraError as exc:
        return HTMLResponse(exc.message, status_code=exc.status)
    return HTMLResponse(_card_html(request, school_id, student))


@router.post("/pickup/{school_id}/students/{student_id}/{action}", include_in_schema=False)
async def card_action(request: Request, school_id: int, student_id: int, action: str,
                      form: CheckedForm) -> Response:
    """Pronto / Retirado / Desfazer with the version the card showed, as the operator.

    The board's script asks for JSON (the card as it is now, and what to say); a plain form
    post is sent back to the board with a notice.
    """
    ctx = context(request)
    sent = str(form.get("version") or "")
    try:
        if action not in LABELS:
            raise EsteiraError(ErrorCode.NOT_FOUND, f"No card action {action!r}.")
        if not sent.isdigit():
            raise EsteiraError(ErrorCode.REQUEST_INVALID, "The card's version is missing.")
        await _student_of(ctx, school_id, student_id)
        student = await _apply(ctx, action, student_id, int(sent), actor(request))
    except EsteiraError as exc:
        return await _refused(request, school_id, student_id, sent, exc)
    text = DONE[action].format(name=student.name)
    if not _wants_json(request):
        return redirect(request, f"/pickup/{school_id}", notice=text)
    return JSONResponse({"code": None, "message": text,
                         "card": _card_html(request, school_id, student)})


# The card's buttons and what the board says once one worked, in the board's language.
LABELS = {"ready": "Pronto", "pickup": "Retirado", "undo": "Desfazer"}
DONE = {"ready": "{name}: pronto para sair.", "pickup": "{name}: retirado.",
        "undo": "{name}: ação desfeita."}
MOVED_TEXT = "Outra pessoa já moveu este cartão."
# Either code, when the version differs, means the card the operator saw is out of date.
MOVED = {PickupErrorCode.VERSION_CONFLICT, PickupErrorCode.INVALID_TRANSITION}


async def _apply(ctx: ApiContext, action: str, student_id: int, version: int,
                 who: str) -> Student:
    kicker = Kicker(ctx.settings.pickup, ctx.temporal)
    timeout = timedelta(minutes=ctx.settings.pickup.ready_timeout_minutes)
    if action == "ready":
        return await operations.mark_ready(ctx.sessions, kicker, student_id=student_id,
                                           version=version, actor=who, ready_timeout=timeout)
    if action == "pickup":
        return await operations.confirm_pickup(ctx.sessions, kicker, student_id=student_id,
                                               version=version, actor=who)
    return await operations.undo(ctx.sessions, kicker, student_id=student_id, version=version,
                                 actor=who, ready_timeout=timeout)


async def _refused(request: Request, school_id: int, student_id: int, sent: str,
                   exc: EsteiraError) -> Response:
    """The refusal, with the card as it is now so the page can show it."""
    try:
        current = await _student_of(context(request), school_id, student_id)
    except EsteiraError:
        current = None
    moved = (exc.code in MOVED and current is not None and str(current.version) != sent)
    shown = EsteiraError(exc.code, MOVED_TEXT, refusal=exc.refusal) if moved else exc
    if not _wants_json(request):
        return redirect(request, f"/pickup/{school_id}", error=shown)
    card_html = _card_html(request, school_id, current) if current is not None else None
    return JSONResponse({**shown.body(), "moved": moved, "card": card_html},
                        status_code=exc.status)


async def _student_of(ctx: ApiContext, school_id: int, student_id: int) -> Student:
    student = await operations.get_student(ctx.sessions, student_id)
    if student.school_id != school_id:
        raise EsteiraError(ErrorCode.NOT_FOUND,
                           f"Student {student_id} is not on school {school_id}'s board.")
    return student


def _wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("Accept", "")


def _card(student: Student) -> dict:
    return {"student": student,
            "actions": [(a, LABELS[a]) for a in operations.staff_actions(student)]}


def _reasons() -> dict[str, str]:
    return {"ready_timeout_reason": READY_TIMEOUT_REASON,
            "arrival_timeout_reason": ARRIVAL_TIMEOUT_REASON}


def _card_html(request: Request, school_id: int, student: Student) -> str:
    return TEMPLATES.get_template("_pickup_card.html").render(
        card=_card(student), school_id=school_id,
        csrf=getattr(request.state, "csrf", None) or "", **_reasons())
