"""The guardian page's own cookie session, apart from the operator's: its name, its path
(`/guardian`, outside every guarded prefix), its CSRF token, and the forms before sign-in.

The cookie holds a random token whose SHA-256 is an access token of kind `web`: revoked by
signing out or by an operator (`POST /api/pickup/guardians/{id}/tokens/{id}/revoke`). It is
HttpOnly, SameSite=Lax (a guardian opens the page from a message app: Strict would drop it on
that first navigation; every form still needs the CSRF token) and Secure outside
Development or behind `Dashboard:SecureCookies`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime

from fastapi import Request
from fastapi.responses import Response
from starlette.datastructures import FormData

from activities.pickup.operator import PickupOperations
from services.dashboard.session import CSRF_FIELD, tokens_match
from services.dashboard.web import context
from shared.db.models import utcnow
from shared.errors import EsteiraError

GUARDIAN_COOKIE = "esteira_guardian"
GUARDIAN_PATH = "/guardian"
# Before a session exists (asking for a link, spending one): a double-submit cookie.
FORM_COOKIE = "esteira_guardian_form"


@dataclass(frozen=True)
class GuardianSession:
    """A signed-in guardian, with the token every form of theirs must echo."""

    guardian_id: int
    csrf: str
    raw: str


def csrf_of(raw: str) -> str:
    """The session's CSRF token: derived from the cookie, which a forging page can't read."""
    digest = hmac.new(raw.encode(), b"esteira-guardian-csrf", hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def secure(request: Request) -> bool:
    """Secure cookies outside Development, or wherever the operator's are."""
    settings = context(request).settings
    return settings.dashboard.secure_cookies or settings.environment != "Development"


async def current(request: Request, pickup: PickupOperations) -> GuardianSession | None:
    """The request's live guardian session, if any."""
    raw = request.cookies.get(GUARDIAN_COOKIE)
    if not raw:
        return None
    try:
        guardian_id = await pickup.guardian_page.guardian_of_session(raw)
    except EsteiraError:
        return None
    return GuardianSession(guardian_id, csrf_of(raw), raw)


def form_ok(session: GuardianSession, form: FormData) -> bool:
    """The form carried the session's CSRF token."""
    presented = form.get(CSRF_FIELD)
    return tokens_match(presented if isinstance(presented, str) else None, session.csrf)


def start(request: Request, response: Response, raw: str, expires: datetime) -> None:
    """Set the session cookie (and drop the pre-session form cookie)."""
    response.set_cookie(GUARDIAN_COOKIE, raw, httponly=True, samesite="lax",
                        secure=secure(request), path=GUARDIAN_PATH,
                        max_age=max(1, int((expires - utcnow()).total_seconds())))
    response.delete_cookie(FORM_COOKIE, path=GUARDIAN_PATH)


def end(response: Response) -> None:
    """Clear the session cookie."""
    response.delete_cookie(GUARDIAN_COOKIE, path=GUARDIAN_PATH)


def new_form_token() -> str:
    """A pre-session form's token (the page renders it, `set_form_cookie` sets it)."""
    return secrets.token_urlsafe(32)


def set_form_cookie(request: Request, response: Response, token: str) -> None:
    """The pre-session form's token as a Strict cookie the posted form must match."""
    response.set_cookie(FORM_COOKIE, token, httponly=True, samesite="strict",
                        secure=secure(request), path=GUARDIAN_PATH)


def form_token_ok(request: Request, form: FormData) -> bool:
    """The pre-session form echoed its cookie's token."""
    presented = form.get(CSRF_FIELD)
    return tokens_match(presented if isinstance(presented, str) else None,
                        request.cookies.get(FORM_COOKIE))
