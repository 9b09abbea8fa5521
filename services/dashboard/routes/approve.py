"""The approver's page: a shell whose script reads the approver's token from the URL fragment."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from services.dashboard.web import render

router = APIRouter()


@router.get("/approve/{job_id}", response_class=HTMLResponse, include_in_schema=False)
async def approve_page(request: Request, job_id: str) -> HTMLResponse:
    """The same page for any id: what the job holds is fetched only with the token."""
    response = render(request, "approve.html", job_id=job_id)
    # The fragment is never sent, but the full URL stays out of Referer headers and caches.
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["Cache-Control"] = "no-store"
    return response
