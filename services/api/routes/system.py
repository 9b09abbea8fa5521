"""Liveness, readiness and metrics."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel

from services.api.scrape_refresh import ScrapeRefresher
from services.app_context import ContextDep
from shared import metrics
from shared.readiness import evaluate
from shared.version import full_version

router = APIRouter(prefix="/api", tags=["system"])


class Health(BaseModel):
    """`GET /api/health`."""

    status: str
    version: str


class Check(BaseModel):
    """One readiness probe's verdict (with `gating` and `detail` on `/ready/details`)."""

    name: str
    ok: bool
    gating: bool | None = None
    detail: str | None = None


class Readiness(BaseModel):
    """`GET /api/ready` and `/ready/details`: Ready or NotReady (503), per probe."""

    status: str
    checks: list[Check]


# Both statuses carry the same body: 503 says a gating probe failed.
_READINESS = {200: {"model": Readiness}, 503: {"model": Readiness}}


@router.get("/health", response_model=Health)
async def health() -> dict[str, str]:
    """Liveness: the process answers; nothing else is checked."""
    return {"status": "Healthy", "version": full_version()}


@router.get("/ready", response_model=None, responses=_READINESS)
async def ready(ctx: ContextDep) -> JSONResponse:
    """Per-probe verdict without detail; 503 when a gating check fails."""
    verdict = await evaluate(await ctx.probes())
    body = {
        "status": "Ready" if verdict.ready else "NotReady",
        "checks": [{"name": c.name, "ok": c.ok} for c in verdict.checks],
    }
    return JSONResponse(body, status_code=200 if verdict.ready else 503)


@router.get("/ready/details", response_model=None, responses=_READINESS)
async def ready_details(ctx: ContextDep) -> JSONResponse:
    """The same probes with each check's detail (API key required)."""
    verdict = await evaluate(await ctx.probes())
    body = {
        "status": "Ready" if verdict.ready else "NotReady",
        "checks": [
            {"name": c.name, "ok": c.ok, "gating": c.gating, "detail": c.detail}
            for c in verdict.checks
        ],
    }
    return JSONResponse(body, status_code=200 if verdict.ready else 503)


@router.get("/metrics", response_class=Response, responses={200: {
    "content": {metrics.CONTENT_TYPE: {"schema": {"type": "string"}}},
    "description": "The Prometheus text exposition format."}})
async def prometheus_metrics(request: Request, ctx: ContextDep) -> Response:
    """Prometheus exposition: our metrics and the Temporal SDK's."""
    state = request.app.state
    if getattr(state, "scrape_refresher", None) is None:
        state.scrape_refresher = ScrapeRefresher(ctx)
    await state.scrape_refresher.refresh()
    return Response(metrics.exposition(), media_type=metrics.CONTENT_TYPE)
