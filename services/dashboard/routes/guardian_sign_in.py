"""The guardian page's sign-in: ask for a one-time link, open it, spend it; sign out."""

from __future__ import annotations

import math

from fastapi import APIRouter, BackgroundTasks, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from services.app_context import PickupFace
from services.dashboard import guardian_session as gs
from services.dashboard.guard import CsrfRejected
from services.dashboard.web import redirect, render
from shared.errors import EsteiraError

router = APIRouter()
HOME = "/guardian"
SIGN_IN = "/guardian/sign-in"
# The same words whether or not a guardian matched: the page does not say who exists.
SENT = ("Se os dados informados estiverem cadastrados na escola, enviamos um link de acesso "
        "pelo canal de avisos da escola. Ele vale por {minutes} minutos e só pode ser usado "
        "uma vez.")
EXPIRED_FORM = "O formulário expirou; tente de novo."
THROTTLED = "Muitos pedidos de link em pouco tempo; tente de novo em alguns minutos."
MISSING = "Informe seu CPF, e-mail ou telefone."


def _form_page(request: Request, template: str, status: int = 200, **values) -> HTMLResponse:
    """A page whose form works before sign-in (its token rides in a Strict cookie too)."""
    token = gs.new_form_token()
    response = render(request, template, status_code=status, form_token=token, **values)
    gs.set_form_cookie(request, response, token)
    return response


@router.get(SIGN_IN, response_class=HTMLResponse, include_in_schema=False)
async def sign_in_page(request: Request, pickup: PickupFace) -> Response:
    """Ask for a link by CPF, e-mail or phone; a signed-in guardian goes to the page."""
    if await gs.current(request, pickup) is not None:
        return RedirectResponse(HOME, status_code=303)
    return _form_page(request, "guardian_sign_in.html")


@router.post(SIGN_IN, include_in_schema=False)
async def ask_for_link(request: Request, pickup: PickupFace,
                       background: BackgroundTasks) -> Response:
    """Issue a link to whoever the identity names and answer the same either way; the link
    leaves after the answer, so how long sending takes tells nothing either."""
    form = await request.form()
    if not gs.form_token_ok(request, form):
        return _form_page(request, "guardian_sign_in.html", 403, error=EXPIRED_FORM)
    identity = str(form.get("identity") or "").strip()
    if not identity:
        return _form_page(request, "guardian_sign_in.html", 422, error=MISSING)
    answer = await pickup.guardian_page.request_link(
        identity=identity, address=request.client.host if request.client else None)
    if answer.retry_after is not None:
        response = _form_page(request, "guardian_sign_in.html", 429, error=THROTTLED)
        response.headers["Retry-After"] = str(math.ceil(answer.retry_after))
        return response
    if answer.messages:
        background.add_task(pickup.guardian_page.send_links, answer.messages)
    return _form_page(request, "guardian_sign_in.html",
                      sent=SENT.format(minutes=pickup.guardian_page.link_minutes))


@router.get("/guardian/link", response_class=HTMLResponse, include_in_schema=False)
async def link_page(request: Request, pickup: PickupFace, token: str = "") -> HTMLResponse:
    """The link's page: a button that spends it (a message app's preview only reads it)."""
    if not token or not await pickup.guardian_page.link_usable(token):
        return render(request, "guardian_link.html", status_code=401, invalid=True)
    return _form_page(request, "guardian_link.html", token=token)


@router.post("/guardian/link", include_in_schema=False)
async def use_link(request: Request, pickup: PickupFace) -> Response:
    """Spend the link (once) for a guardian session cookie."""
    form = await request.form()
    token = str(form.get("token") or "")
    if not gs.form_token_ok(request, form):
        return _form_page(request, "guardian_link.html", 403, token=token, error=EXPIRED_FORM)
    try:
        opened = await pickup.guardian_page.use_link(token)
    except EsteiraError:
        return render(request, "guardian_link.html", status_code=401, invalid=True)
    response = RedirectResponse(HOME, status_code=303)
    gs.start(request, response, opened.cookie, opened.expires_at)
    return response


@router.post("/guardian/sign-out", include_in_schema=False)
async def sign_out(request: Request, pickup: PickupFace) -> Response:
    """End the session for good (a copy of the cookie signs nobody in afterwards)."""
    session = await gs.current(request, pickup)
    if session is not None:
        if not gs.form_ok(session, await request.form()):
            raise CsrfRejected()
        await pickup.guardian_page.sign_out(session.raw)
    response = redirect(request, SIGN_IN, notice="Você saiu da retirada escolar.")
    gs.end(response)
    return response
