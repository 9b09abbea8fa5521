"""The guardian page: their students (valid links only), "Estou chegando", the students'
state live over a cookie-authenticated event stream, and the notifications sent to them."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import aclosing
from datetime import datetime
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse

from activities.pickup.contracts.board import (
    ARRIVAL_TIMEOUT_REASON,
    READY_TIMEOUT_REASON,
    PickupErrorCode,
    PickupState,
)
from activities.pickup.contracts.errors import pickup_error
from activities.pickup.models import Notification, Student
from services.app_context import PickupFace
from services.dashboard import guardian_session as gs
from services.dashboard.guard import CsrfRejected
from services.dashboard.web import TEMPLATES, redirect, render
from services.pickup_stream.sse import StreamHubDep, event_stream, last_event_id
from shared.db.models import as_utc
from shared.errors import EsteiraError

router = APIRouter()
HOME = "/guardian"
SIGN_IN = "/guardian/sign-in"
# What the guardian reads for each state, in the school's language.
STATE_LABELS = {PickupState.AT_SCHOOL: "Na escola",
                PickupState.AWAITING: "Aviso de chegada recebido",
                PickupState.READY: "Na saída: retirada liberada",
                PickupState.PICKED_UP: "Retirado"}
SHOWN_REASONS = {READY_TIMEOUT_REASON, ARRIVAL_TIMEOUT_REASON}
SENDING = {"pending": "enviando", "sent": "enviado", "failed": "não entregue"}
REFUSALS = {PickupErrorCode.ACCESS_DENIED: "Você não pode mais retirar {name}.",
            PickupErrorCode.INVALID_TRANSITION: "{name} não está aguardando na escola agora: "
                                                "o aviso não foi enviado."}
# A stream re-checks its session at least this often (each keepalive is a chance), so a
# revoked or signed-out session stops receiving.
SESSION_CHECK_SECONDS = 10.0


@router.get(HOME, response_class=HTMLResponse, include_in_schema=False)
async def home(request: Request, pickup: PickupFace) -> Response:
    """The guardian's students and notifications; anonymous -> the sign-in page."""
    session = await gs.current(request, pickup)
    if session is None:
        return RedirectResponse(SIGN_IN, status_code=303)
    # The newest event first: the stream replays whatever lands while the page loads.
    after = await pickup.feeds.newest_event_id()
    view = await pickup.guardian_page.view(session.guardian_id)
    return render(request, "guardian.html", csrf=session.csrf, guardian=view.guardian,
                  after=after, cards=[_card(s, zone) for s, zone in view.students],
                  notes=_notes(view.notifications))


@router.post(f"{HOME}/arrivals", include_in_schema=False)
async def arriving(request: Request, pickup: PickupFace) -> Response:
    """"Estou chegando" for one student, as a plain form post (works without scripts)."""
    session = await gs.current(request, pickup)
    if session is None:
        return RedirectResponse(SIGN_IN, status_code=303)
    form = await request.form()
    if not gs.form_ok(session, form):
        raise CsrfRejected()
    sent = str(form.get("student_id") or "")
    student_id = int(sent) if sent.isdigit() else 0
    try:
        student, _ = await pickup.guardian_page.linked_student(session.guardian_id, student_id)
    except EsteiraError:
        # Not linked now, or no such student: the same refusal, naming nobody.
        return _refused(request, PickupErrorCode.ACCESS_DENIED, "este aluno")
    try:
        await pickup.access.signal_arrivals(guardian_id=session.guardian_id,
                                            student_ids=[student_id])
    except EsteiraError as exc:
        return _refused(request, exc.code, student.name)
    return redirect(request, HOME, notice=f"Aviso enviado: a escola já sabe que você está "
                                          f"chegando para buscar {student.name}.")


def _refused(request: Request, code: str, name: str) -> Response:
    text = REFUSALS.get(code, "{name}: o aviso não pôde ser enviado.").format(name=name)
    known = code in PickupErrorCode.__members__.values()
    return redirect(request, HOME, error=pickup_error(PickupErrorCode(code), text) if known
                    else EsteiraError(code, text))


@router.get(f"{HOME}/events", include_in_schema=False)
async def events(request: Request, pickup: PickupFace, hub: StreamHubDep,
                 after: int | None = None) -> Response:
    """The guardian's feed, as the REST door serves the app's, over the page's cookie: an
    EventSource sends no Authorization header. A session that ends closes its stream."""
    session = await gs.current(request, pickup)
    if session is None:
        return Response("Sign in again.", status_code=401)
    response = event_stream(request, hub, pickup.feeds.guardian_feed(session.guardian_id),
                            last_event_id(request.headers.get("Last-Event-ID"), after))

    async def still_signed_in() -> bool:
        return await gs.current(request, pickup) is not None

    return StreamingResponse(_while(response.body_iterator, still_signed_in),
                             media_type=response.media_type, headers={
                                 "Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@router.get(f"{HOME}/students/{{student_id}}/card", response_class=HTMLResponse,
            include_in_schema=False)
async def card(request: Request, student_id: int, pickup: PickupFace) -> Response:
    """One student's card as it is now (the page swaps it in after an event)."""
    session = await gs.current(request, pickup)
    if session is None:
        return Response("Sign in again.", status_code=401)
    try:
        student, zone = await pickup.guardian_page.linked_student(session.guardian_id,
                                                                  student_id)
    except EsteiraError as exc:
        return HTMLResponse(exc.message, status_code=exc.status)
    return HTMLResponse(TEMPLATES.get_template("_guardian_card.html").render(
        c=_card(student, zone), csrf=session.csrf))


@router.get(f"{HOME}/notifications", response_class=HTMLResponse, include_in_schema=False)
async def notifications(request: Request, pickup: PickupFace) -> Response:
    """The notification list as it is now."""
    session = await gs.current(request, pickup)
    if session is None:
        return Response("Sign in again.", status_code=401)
    view = await pickup.guardian_page.view(session.guardian_id)
    return HTMLResponse(TEMPLATES.get_template("_guardian_notifications.html").render(
        notes=_notes(view.notifications)))


async def _while(body, signed_in) -> AsyncIterator[str | bytes]:
    checked = time.monotonic()
    async with aclosing(body) as chunks:
        async for chunk in chunks:
            if time.monotonic() - checked >= SESSION_CHECK_SECONDS:
                if not await signed_in():
                    return
                checked = time.monotonic()
            yield chunk


def _local(moment: datetime, zone: str) -> str:
    return as_utc(moment).astimezone(ZoneInfo(zone)).strftime("%d/%m %H:%M")


def _card(student: Student, zone: str) -> dict:
    return {"id": student.id, "name": student.name, "version": student.version,
            "state": student.state, "label": STATE_LABELS[PickupState(student.state)],
            "since": _local(student.state_since, zone),
            "reason": student.state_reason if student.state_reason in SHOWN_REASONS else None,
            "can_arrive": student.state == PickupState.AT_SCHOOL}


def _notes(rows: list[tuple[Notification, str]]) -> list[dict]:
    return [{"message": n.message, "at": as_utc(n.created_at).isoformat(),
             "local": _local(n.created_at, zone), "status": SENDING.get(n.status, n.status)}
            for n, zone in rows]
