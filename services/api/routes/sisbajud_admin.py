"""`/v1/admin/ledger-routing`: the accounting-route documents and their preflight."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Request
from pydantic import ValidationError

from services.api.routes.sisbajud_actor import credential_actor
from shared.auth import API_KEY_HEADER, keys_match
from shared.db.models import utcnow
from shared.db.sisbajud_models import SisbajudRoutingDocument
from shared.errors import ErrorCode, EsteiraError
from shared.sisbajud_routing import DOCUMENT_KEYS, load_documents, preflight, validate_document


def require_api_key(request: Request) -> None:
    """The `/api` middleware does not cover `/v1/admin`: check the key here."""
    presented = request.headers.get(API_KEY_HEADER)
    if presented is None:
        raise EsteiraError(ErrorCode.AUTH_MISSING_KEY, f"The {API_KEY_HEADER} header is required.")
    if not keys_match(presented, request.app.state.context.api_key):
        raise EsteiraError(ErrorCode.AUTH_INVALID_KEY, "The API key is not valid.")


router = APIRouter(prefix="/v1/admin/ledger-routing", tags=["sisbajud-admin"],
                   dependencies=[Depends(require_api_key)])


def _known(key: str) -> None:
    if key not in DOCUMENT_KEYS:
        raise EsteiraError(ErrorCode.NOT_FOUND,
                           f"No routing document {key}; use one of {', '.join(DOCUMENT_KEYS)}.")


def _document(row: SisbajudRoutingDocument) -> dict[str, Any]:
    return {"key": row.key, "document": row.document, "version": row.version,
            "updatedBy": row.updated_by, "updatedAt": row.updated_at.isoformat()}


@router.get("/preflight")
async def routing_preflight(request: Request) -> dict[str, Any]:
    """Check the documents against the configured institutions before routes are switched on."""
    context = request.app.state.context
    async with context.sessions() as session:
        documents = await load_documents(session)
    return preflight(context.settings, documents).to_json()


@router.get("/{key}")
async def get_routing_document(key: str, request: Request) -> dict[str, Any]:
    """One stored routing document."""
    _known(key)
    async with request.app.state.context.sessions() as session:
        row = await session.get(SisbajudRoutingDocument, key)
    if row is None:
        raise EsteiraError(ErrorCode.NOT_FOUND, f"Routing document {key} is not set.")
    return _document(row)


@router.put("/{key}")
async def put_routing_document(key: str, request: Request,
                               document: Annotated[dict[str, Any], Body()]) -> dict[str, Any]:
    """Replace a routing document (validated; deferred writes pick it up on their next try)."""
    _known(key)
    try:
        canonical = validate_document(key, document)
    except ValidationError as exc:
        raise EsteiraError(ErrorCode.REQUEST_INVALID,
                           f"{key} is not valid: {exc.error_count()} error(s): "
                           + "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                                       for e in exc.errors())) from exc
    actor = credential_actor(request)  # who holds the credential, never a header they set
    async with request.app.state.context.sessions() as session:
        row = await session.get(SisbajudRoutingDocument, key)
        if row is None:
            row = SisbajudRoutingDocument(key=key, document=canonical, version=1)
        else:
            row.document, row.version = canonical, row.version + 1
        row.updated_by, row.updated_at = actor[:200], utcnow()
        session.add(row)
        await session.commit()
        await session.refresh(row)
    return _document(row)
