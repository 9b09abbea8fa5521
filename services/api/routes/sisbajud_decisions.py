"""Human decisions of the SISBAJUD executor: the list, and a person's resolution (two people
for one that moves or frees money)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Response

from activities.sisbajud import operator
from activities.sisbajud.operator import ResolutionIn
from services.api.routes.sisbajud_actor import ActorDep
from services.app_context import ContextDep

router = APIRouter(prefix="/api/sisbajud/human-decisions", tags=["sisbajud"])


@router.get("")
async def list_human_decisions(ctx: ContextDep, open: bool | None = None,
                               limit: Annotated[int, Query(ge=1, le=500)] = 100
                               ) -> dict[str, Any]:
    """Orders waiting for (or decided by) a person, newest first; `open=true` for the waiting."""
    return await operator.list_decisions(ctx.sessions, open, limit)


@router.post("/{decision_id}/resolution", responses={202: {"description": "proposed"}})
async def resolve_decision(decision_id: int, body: ResolutionIn, ctx: ContextDep,
                           actor: ActorDep, response: Response) -> dict[str, Any]:
    """End the order's wait with this final result (200); one that moves or frees money is
    first proposed (202) and then confirmed by a different person (409 `sisbajud.same-actor`
    for the same one). The actor is the caller's credential."""
    done = await operator.resolve_decision(ctx.sessions, ctx.temporal, decision_id, body, actor)
    if done["status"] == "proposed":
        response.status_code = 202
    return done
