"""`/v1/admin/ledger-routing`: the accounting-route documents and their preflight."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Request

from services.api.routes.sisbajud_wire import (
    SisbajudConnectionOut,
    SisbajudPreflightOut,
    SisbajudRoutingDocumentOut,
)
from services.app_context import ContextDep, SisbajudFace
from services.operator_credentials import ActorDep
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
async def routing_preflight(sisbajud: SisbajudFace) -> SisbajudPreflightOut:
    """Check the documents against the configured institutions before routes are switched on,
    and call each institution's token endpoint and CRM once (`connections`)."""
    report = await sisbajud.routing.preflight()
    connections = await sisbajud.connections.report()
    return SisbajudPreflightOut(
        ready=not report.problems, systemplane_enabled=report.systemplane_enabled,
        problems=report.problems, warnings=report.warnings,
        connections=[SisbajudConnectionOut.model_validate(c) for c in connections])


@router.get("/{key}")
async def get_routing_document(key: str, sisbajud: SisbajudFace) -> SisbajudRoutingDocumentOut:
    """One stored routing document."""
    return SisbajudRoutingDocumentOut.model_validate(await sisbajud.routing.get(key))


@router.put("/{key}")
async def put_routing_document(key: str, sisbajud: SisbajudFace, actor: ActorDep,
                               document: Annotated[dict[str, Any], Body()]
                               ) -> SisbajudRoutingDocumentOut:
    """Replace a routing document (validated; deferred writes pick it up on their next try);
    the editor is the credential's holder, never a header they set."""
    written = await sisbajud.routing.put(key, document, actor)
    return SisbajudRoutingDocumentOut.model_validate(written)
