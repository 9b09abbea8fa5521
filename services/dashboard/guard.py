"""Who is asking: a signed-in operator (cookie) or automation (API key); CSRF on every form."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated
from urllib.parse import quote

from fastapi import Depends, Request
from starlette.datastructures import FormData
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.responses import RedirectResponse, Response

from services.dashboard.accounts import OperatorDirectory
from services.dashboard.session import (
    CSRF_FIELD,
    CSRF_HEADER,
    SESSION_COOKIE,
    Session,
    SessionCodec,
    tokens_match,
)
from services.dashboard.session_store import SessionRevocations, SignInThrottle
from shared.auth import API_KEY_HEADER, keys_match
from shared.db.models import utcnow

# The dashboard's pages; everything else (/api, /static, /login) is not guarded here.
GUARDED_PREFIXES = ("/jobs", "/profiles", "/folders", "/events", "/system", "/pickup",
                    "/sisbajud", "/logout")


@dataclass(frozen=True)
class DashboardAuth:
    """What the guard needs, built once by `install()`."""

    directory: OperatorDirectory
    codec: SessionCodec
    api_key: str
    secure_cookies: bool
    revocations: SessionRevocations
    throttle: SignInThrottle

    async def session_of(self, request: Request) -> Session | None:
        """The request's signed, unexpired and not signed-out session, if any."""
        session = self.codec.read(request.cookies.get(SESSION_COOKIE), utcnow())
        if session is None or await self.revocations.is_revoked(session):
            return None
        return session


class CsrfRejected(Exception):
    """A form came without the session's CSRF token."""


def _guarded(path: str) -> bool:
    return path == "/" or any(path == p or path.startswith(p + "/") for p in GUARDED_PREFIXES)


class DashboardAuthMiddleware(BaseHTTPMiddleware):
    """Dashboard pages need a session cookie or the API key; anonymous -> /login."""

    def __init__(self, app, auth: DashboardAuth) -> None:
        super().__init__(app)
        self._auth = auth

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        if not _guarded(request.url.path):
            return await call_next(request)
        session = await self._auth.session_of(request)
        request.state.api_key_auth = False
        if session is not None:
            request.state.operator = session.operator
            request.state.actor = f"operator:{session.operator}"
            request.state.csrf = session.csrf
            return await call_next(request)
        if keys_match(request.headers.get(API_KEY_HEADER), self._auth.api_key):
            request.state.operator = None
            request.state.actor = "api-key"
            request.state.csrf = None
            # No ambient credential rides along with a header: no CSRF to defend against.
            request.state.api_key_auth = True
            return await call_next(request)
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        login = f"/login?next={quote(target, safe='')}"
        if request.headers.get("HX-Request"):
            return Response(status_code=401, headers={"HX-Redirect": login})
        return RedirectResponse(login, status_code=303)


async def checked_form(request: Request) -> FormData:
    """The request's form, after its CSRF token (field or header) matched the session's."""
    form = await request.form()
    if getattr(request.state, "api_key_auth", False):
        return form
    presented = request.headers.get(CSRF_HEADER) or form.get(CSRF_FIELD)
    if not tokens_match(presented if isinstance(presented, str) else None,
                        getattr(request.state, "csrf", None)):
        raise CsrfRejected()
    return form


CheckedForm = Annotated[FormData, Depends(checked_form)]


def actor(request: Request) -> str:
    """`operator:<name>` or `api-key`, as the events trail records it."""
    return getattr(request.state, "actor", "anonymous")
