"""Pickup: the schools and the outbound queues' day, a live board per school, and staff's
actions on its cards."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse

from activities.pickup.contracts.board import (
    ARRIVAL_TIMEOUT_REASON,
    READY_TIMEOUT_REASON,
    PickupErrorCode,
)
from activities.pickup.models import Student
from activities.pickup.operator import PickupOperations
from services.app_context import PickupFace
from services.dashboard.guard import CheckedForm, actor
from services.dashboard.web import TEMPLATES, redirect, render
from services.pickup_stream.sse import StreamHubDep, event_stream, last_event_id
from shared.db.models import utcnow
from shared.errors import ErrorCode, EsteiraError

router = APIRouter()


@router.get("/pickup", response_class=HTMLResponse, include_in_schema=False)
async def schools_page(request: Request, pickup: PickupFace) -> HTMLResponse:
    """Every school, each linking to its board, and the outbound queues over the day."""
    schools = await pickup.schools.all()
    charts = await pickup.queues.charts(now=utcnow())
    return render(request, "pickup.html", schools=schools, charts=charts)


@router.get("/pickup/{school_id}", response_class=HTMLResponse, include_in_schema=False)
async def board_page(request: Request, school_id: int, pickup: PickupFace) -> HTMLResponse:
    """The school's board; the page subscribes to `/pickup/{id}/events` from what it shows."""
    try:
        # The newest event first: the stream replays anything that lands while the board loads.
        after = await pickup.feeds.newest_event_id()
        school, students = await pickup.board.school_board(school_id)
    except EsteiraError as exc:
        return render(request, "not_found.html", status_code=exc.status, error=exc)
    return render(request, "pickup_board.html", school=school, school_id=school.id, after=after,
                  cards=[_card(pickup, s) for s in students], **_reasons())


@router.get("/pickup/{school_id}/events", include_in_schema=False)
async def board_events(request: Request, school_id: int, pickup: PickupFace,
                       hub: StreamHubDep, after: int | None = None) -> StreamingResponse:
    """The board's stream, as the REST door serves it, reachable with the operator's cookie
    (EventSource sends no headers, so it can't carry the API key)."""
    await pickup.schools.get(school_id)
    return event_stream(request, hub, pickup.feeds.school_feed(school_id),
                        last_event_id(request.headers.get("Last-Event-ID"), after))


@router.get("/pickup/{school_id}/students/{student_id}/card", response_class=HTMLResponse,
            include_in_schema=False)
async def card(request: Request, school_id: int, student_id: int,
               pickup: PickupFace) -> HTMLResponse:
    """One card as the board shows it now (the page swaps it in after a change)."""
    try:
        student = await pickup.board.card(school_id, student_id)
    except EsteiraError as exc:
        return HTMLResponse(exc.message, status_code=exc.status)
    return HTMLResponse(_card_html(request, pickup, school_id, student))


@router.post("/pickup/{school_id}/students/{student_id}/{action}", include_in_schema=False)
async def card_action(request: Request, school_id: int, student_id: int, action: str,
                      form: CheckedForm, pickup: PickupFace) -> Response:
    """Pronto / Retirado / Desfazer with the version the card showed, as the operator.

    The board's script asks for JSON (the card as it is now, and what to say); a plain form
    post is sent back to the board with a notice.
    """
    sent = str(form.get("version") or "")
    try:
        if action not in LABELS:
            raise EsteiraError(ErrorCode.NOT_FOUND, f"No card action {action!r}.")
        if not sent.isdigit():
            raise EsteiraError(ErrorCode.REQUEST_INVALID, "The card's version is missing.")
        await pickup.board.card(school_id, student_id)
        student = await pickup.board.staff_action(action, student_id=student_id,
                                                  version=int(sent), actor=actor(request))
    except EsteiraError as exc:
        return await _refused(request, pickup, school_id, student_id, sent, exc)
    text = DONE[action].format(name=student.name)
    if not _wants_json(request):
        return redirect(request, f"/pickup/{school_id}", notice=text)
    return JSONResponse({"code": None, "message": text,
                         "card": _card_html(request, pickup, school_id, student)})


# The card's buttons and what the board says once one worked, in the board's language.
LABELS = {"ready": "Pronto", "pickup": "Retirado", "undo": "Desfazer"}
DONE = {"ready": "{name}: pronto para sair.", "pickup": "{name}: retirado.",
        "undo": "{name}: ação desfeita."}
MOVED_TEXT = "Outra pessoa já moveu este cartão."
# Either code, when the version differs, means the card the operator saw is out of date.
MOVED = {PickupErrorCode.VERSION_CONFLICT, PickupErrorCode.INVALID_TRANSITION}


async def _refused(request: Request, pickup: PickupOperations, school_id: int, student_id: int,
                   sent: str, exc: EsteiraError) -> Response:
    """The refusal, with the card as it is now so the page can show it."""
    current: Student | None
    try:
        current = await pickup.board.card(school_id, student_id)
    except EsteiraError:
        current = None
    moved = (exc.code in MOVED and current is not None and str(current.version) != sent)
    shown = EsteiraError(exc.code, MOVED_TEXT, refusal=exc.refusal) if moved else exc
    if not _wants_json(request):
        return redirect(request, f"/pickup/{school_id}", error=shown)
    card_html = _card_html(request, pickup, school_id, current) if current is not None else None
    return JSONResponse({**shown.body(), "moved": moved, "card": card_html},
                        status_code=exc.status)


def _wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("Accept", "")


def _card(pickup: PickupOperations, student: Student) -> dict:
    return {"student": student,
            "actions": [(a, LABELS[a]) for a in pickup.board.staff_actions(student)]}


def _reasons() -> dict[str, str]:
    return {"ready_timeout_reason": READY_TIMEOUT_REASON,
            "arrival_timeout_reason": ARRIVAL_TIMEOUT_REASON}


def _card_html(request: Request, pickup: PickupOperations, school_id: int,
               student: Student) -> str:
    return TEMPLATES.get_template("_pickup_card.html").render(
        card=_card(pickup, student), school_id=school_id,
        csrf=getattr(request.state, "csrf", None) or "", **_reasons())
