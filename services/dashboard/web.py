"""Rendering: templates, the page context every page shares, one-shot notices, links."""

from __future__ import annotations

import base64
import json
from datetime import datetime
from pathlib import Path
from urllib.parse import quote, urlencode

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.templating import Jinja2Templates

from services.app_context import ApiContext
from shared.db.models import as_utc
from shared.errors import EsteiraError
from shared.temporal_ui import temporal_ui_url

FLASH_COOKIE = "esteira_flash"
NAV = [("/jobs", "Jobs"), ("/profiles", "Profiles"), ("/folders", "Input folders"),
       ("/events", "Events"), ("/system", "System"), ("/pickup", "Pickup"),
       ("/sisbajud", "SISBAJUD")]
TEMPLATES = Jinja2Templates(directory=Path(__file__).parent / "templates")


def _when(value: str | datetime | None) -> str:
    if not value:
        return "—"
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _iso(value: datetime | None) -> str:
    return as_utc(value).isoformat() if value else ""


TEMPLATES.env.filters["when"] = _when
TEMPLATES.env.filters["iso"] = _iso


def context(request: Request) -> ApiContext:
    """The API process's shared dependencies."""
    return request.app.state.context


def temporal_link(request: Request, workflow_id: str) -> str:
    """The workflow's page in the Temporal Web UI."""
    settings = context(request).settings
    return (f"{temporal_ui_url(settings, seen_host=request.url.hostname)}/namespaces/"
            f"{quote(settings.temporal.namespace, safe='')}/workflows/"
            f"{quote(workflow_id, safe='')}")


def next_page_url(request: Request, path: str, cursor: str | None) -> str | None:
    """The same list with the same filters, continued after this page (None on the last)."""
    if cursor is None:
        return None
    kept = [(k, v) for k, v in request.query_params.multi_items() if k != "cursor"]
    return f"{path}?{urlencode([*kept, ('cursor', cursor)])}"


def render(request: Request, template: str, status_code: int = 200, **values) -> HTMLResponse:
    """A page with the shared context (operator, CSRF token, nav, the pending notice)."""
    flash = _read_flash(request.cookies.get(FLASH_COOKIE))
    page = {"operator": getattr(request.state, "operator", None),
            "csrf": getattr(request.state, "csrf", None) or "", "nav": NAV,
            "flash": flash, "path": request.url.path, "temporal_link": temporal_link,
            **values}
    response = TEMPLATES.TemplateResponse(request, template, page, status_code=status_code)
    if flash:
        response.delete_cookie(FLASH_COOKIE, path="/", httponly=True, samesite="strict",
                               secure=request.app.state.dashboard_auth.secure_cookies)
    return response


def redirect(request: Request, url: str, *, notice: str | None = None,
             error: EsteiraError | None = None) -> RedirectResponse:
    """303 to `url`, carrying a notice (or a refusal with its code) for the next page."""
    response = RedirectResponse(url, status_code=303)
    if notice or error:
        flash = ({"kind": "error", "text": error.message, "code": str(error.code)} if error
                 else {"kind": "ok", "text": notice, "code": None})
        value = base64.urlsafe_b64encode(json.dumps(flash).encode()).decode()
        # Secure like the session cookie: a notice can carry what an operator just typed.
        response.set_cookie(FLASH_COOKIE, value, httponly=True, samesite="strict", path="/",
                            secure=request.app.state.dashboard_auth.secure_cookies)
    return response


def _read_flash(value: str | None) -> dict | None:
    if not value:
        return None
    try:
        flash = json.loads(base64.urlsafe_b64decode(value.encode()))
    except ValueError:
        return None
    return flash if isinstance(flash, dict) and "text" in flash else None
