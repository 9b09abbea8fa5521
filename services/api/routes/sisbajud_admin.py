"""`/v1/admin/ledger-routing`: the accounting-route documents and their preflight."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Request

from activities.sisbajud.operator import routing_documents
from activities.sisbajud.operator.connections import connection_report
from services.api.routes.sisbajud_actor import ActorDep
from services.app_context import ContextDep
from shared.auth import API_KEY_HEADER, keys_match
from shared.errors import ErrorCode, EsteiraError


def require_api_key(request: Request, ctx: ContextDep) -> None:
    """The `/api` middleware does not cover `/v1/admin`: check the key here."""
    presented = request.headers.get(API_KEY_HEADER)
    if presented is None:
        raise EsteiraError(ErrorCode.AUTH_MISSING_KEY, f"The {API_KEY_HEADER} header is required.")
    if not keys_match(presented, ctx.api_key):
        raise EsteiraError(ErrorCode.AUTH_INVALID_KEY, "The API key is not valid.")


router = APIRouter(prefix="/v1/admin/ledger-routing", tags=["sisbajud-admin"],
                   dependencies=[Depends(require_api_key)])


@router.get("/preflight")
async def routing_preflight(ctx: ContextDep) -> dict[str, Any]:
    """Check the documents against the configured institutions before routes are switched on,
    and call each institution's token endpoint and CRM once (`connections`)."""
    answer = await routing_documents.routing_preflight(ctx.sessions, ctx.settings)
    return {**answer, "connections": await connection_report(ctx.settings)}


@router.get("/{key}")
async def get_routing_document(key: str, ctx: ContextDep) -> dict[str, Any]:
    """One stored routing document."""
    return await routing_documents.get_routing_document(ctx.sessions, key, ctx.settings)


@router.put("/{key}")
async def put_routing_document(key: str, ctx: ContextDep, actor: ActorDep,
                               document: Annotated[dict[str, Any], Body()]) -> dict[str, Any]:
    """Replace a routing document (validated; deferred writes pick it up on their next try);
    the editor is the credential's holder, never a header they set."""
    return await routing_documents.put_routing_document(ctx.sessions, key, document, actor,
                                                        ctx.settings)
