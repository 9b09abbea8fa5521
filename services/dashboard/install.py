"""Mounting the dashboard on the API app: guard, pages, static files, the CSRF refusal."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from services.app_context import ApiContext
from services.dashboard.accounts import OperatorDirectory
from services.dashboard.guard import CsrfRejected, DashboardAuth, DashboardAuthMiddleware
from services.dashboard.headers import SecurityHeadersMiddleware
from services.dashboard.routes import approve as approver_page
from services.dashboard.routes import (
    events,
    folders,
    guardian,
    guardian_sign_in,
    jobs,
    login,
    pickup,
    pickup_admin,
    pickup_approvals,
    pickup_records,
    pickup_report,
    profiles,
    sisbajud,
    sisbajud_actions,
    sisbajud_pages,
)
from services.dashboard.routes import system as system_page
from services.dashboard.session import SessionCodec
from services.dashboard.session_store import SessionRevocations, SignInThrottle

STATIC_DIR = Path(__file__).parent / "static"


def install_dashboard(app: FastAPI, context: ApiContext) -> None:
    """Serve the dashboard from the API process (htmx is vendored: no network at run time)."""
    settings = context.settings
    dashboard = settings.dashboard
    auth = DashboardAuth(OperatorDirectory.from_settings(settings, context.api_key),
                         SessionCodec.from_settings(settings, context.api_key),
                         context.api_key, dashboard.secure_cookies,
                         SessionRevocations(context.sessions),
                         SignInThrottle(context.sessions,
                                        max_failures=dashboard.sign_in_max_failures,
                                        lockout=timedelta(
                                            seconds=dashboard.sign_in_lockout_seconds)))
    app.state.dashboard_auth = auth
    app.add_middleware(DashboardAuthMiddleware, auth=auth)
    app.add_middleware(SecurityHeadersMiddleware)
    # The pickup administration's paths come before the board's `/pickup/{school_id}`.
    for module in (login, jobs, profiles, folders, events, system_page, pickup_admin,
                   pickup_records, pickup_approvals, pickup, pickup_report,
                   sisbajud, sisbajud_pages, sisbajud_actions, approver_page,
                   guardian_sign_in, guardian):
        app.include_router(module.router)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="dashboard-static")
    app.add_exception_handler(CsrfRejected, _csrf_rejected)


async def _csrf_rejected(_request: Request, _exc: Exception) -> HTMLResponse:
    return HTMLResponse("<!doctype html><title>Forbidden</title><h1>Forbidden</h1>"
                        "<p>The form's CSRF token is missing or does not match your session. "
                        "Reload the page and try again.</p>", status_code=403)
