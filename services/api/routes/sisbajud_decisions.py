"""Human decisions of the SISBAJUD executor: the list, and a person's resolution (two people
for one that moves or frees money)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from activities.sisbajud.operator import Proposed, ResolutionIn
from services.api.routes.sisbajud_wire import (
    SisbajudDecisionOut,
    SisbajudProposedOut,
    SisbajudResolutionOut,
    SisbajudResolvedOut,
)
from services.app_context import SisbajudFace
from services.operator_credentials import ActorDep
from shared.wire import PageOut

router = APIRouter(prefix="/api/sisbajud/human-decisions", tags=["sisbajud"])
PROPOSED = 202


@router.get("")
async def list_human_decisions(sisbajud: SisbajudFace, open: bool | None = None,
                               limit: Annotated[int, Query(ge=1, le=500)] = 100,
                               cursor: str | None = None) -> PageOut[SisbajudDecisionOut]:
    """Orders waiting for (or decided by) a person, newest first; `open=true` for the waiting."""
    page = await sisbajud.decisions.list(open, limit, cursor)
    return PageOut[SisbajudDecisionOut].model_validate(page)


@router.post("/{decision_id}/resolution",
             responses={PROPOSED: {"description": "proposed: a second person must confirm it",
                                   "model": SisbajudProposedOut}})
async def resolve_decision(decision_id: int, body: ResolutionIn, sisbajud: SisbajudFace,
                           actor: ActorDep, response: Response) -> SisbajudResolutionOut:
    """End the order's wait with this final result (200); one that moves or frees money is
    first proposed (202) and then confirmed by a different person (409 `sisbajud.same-actor`
    for the same one). The actor is the caller's credential."""
    done = await sisbajud.decisions.resolve(decision_id, body, actor)
    if isinstance(done, Proposed):
        response.status_code = PROPOSED
        return SisbajudProposedOut.model_validate(done)
    return SisbajudResolvedOut.model_validate(done)
