"""Signing in and out of the dashboard."""

from __future__ import annotations

import math
import secrets

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from services.dashboard.guard import CheckedForm, DashboardAuth
from services.dashboard.session import CSRF_FIELD, LOGIN_CSRF_COOKIE, SESSION_COOKIE, tokens_match
from services.dashboard.web import render
from shared.db.models import utcnow

router = APIRouter()


def _auth(request: Request) -> DashboardAuth:
    return request.app.state.dashboard_auth


def _safe_next(target: str | None) -> str:
    """Only a path on this site (never `//host` or a scheme): no open redirect."""
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/jobs"


def _login_page(request: Request, *, error: str | None = None, status: int = 200,
                next_url: str = "/jobs") -> HTMLResponse:
    # Before a session exists, CSRF is a double-submit cookie (SameSite=Strict).
    token = secrets.token_urlsafe(32)
    auth = _auth(request)
    response = render(request, "login.html", status_code=status, login_csrf=token, error=error,
                      next_url=next_url, login_enabled=auth.directory.login_enabled,
                      dev_operator=auth.directory.dev_password is not None)
    response.set_cookie(LOGIN_CSRF_COOKIE, token, httponly=True, samesite="strict",
                        secure=auth.secure_cookies, path="/login")
    return response


@router.get("/login", response_class=HTMLResponse, include_in_schema=False)
async def login_page(request: Request) -> HTMLResponse:
    """The sign-in form."""
    return _login_page(request, next_url=_safe_next(request.query_params.get("next")))


@router.post("/login", include_in_schema=False)
async def login(request: Request) -> Response:
    """Check the password; a good one gets a session cookie and goes where it was headed."""
    form = await request.form()
    next_url = _safe_next(str(form.get("next") or ""))
    if not tokens_match(str(form.get(CSRF_FIELD) or ""), request.cookies.get(LOGIN_CSRF_COOKIE)):
        return _login_page(request, error="The form expired; sign in again.", status=403,
                           next_url=next_url)
    auth = _auth(request)
    username, now = str(form.get("username") or ""), utcnow()
    locked = await auth.throttle.locked_for(username, now)
    if locked is not None:
        # Checked before the password: during a lockout the right one is refused too.
        response = _login_page(request, status=429, next_url=next_url,
                               error="Too many wrong passwords; try again later.")
        response.headers["Retry-After"] = str(max(1, math.ceil(locked)))
        return response
    # scrypt is ~50 ms of CPU: off the event loop, so a burst of logins can't stall the API.
    name = await run_in_threadpool(auth.directory.authenticate, username,
                                   str(form.get("password") or ""))
    if name is None:
        await auth.throttle.failed(username, now)
        return _login_page(request, error="Wrong operator name or password.", status=401,
                           next_url=next_url)
    await auth.throttle.succeeded(username)
    value, _session = auth.codec.issue(name, utcnow())
    redirect = RedirectResponse(next_url, status_code=303)
    redirect.set_cookie(SESSION_COOKIE, value, httponly=True, samesite="strict",
                        secure=auth.secure_cookies, path="/",
                        max_age=int(auth.codec.lifetime.total_seconds()))
    redirect.delete_cookie(LOGIN_CSRF_COOKIE, path="/login")
    return redirect


@router.post("/logout", include_in_schema=False)
async def logout(request: Request, _form: CheckedForm) -> RedirectResponse:
    """End the session, server-side too: a copy of the cookie no longer signs anyone in."""
    auth = _auth(request)
    session = await auth.session_of(request)
    if session is not None:
        await auth.revocations.revoke(session, utcnow())
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response
