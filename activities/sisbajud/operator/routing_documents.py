"""The accounting-route documents: read, replace (validated), preflight."""

from __future__ import annotations

from typing import Any

import httpx
from pydantic import ValidationError

from activities.sisbajud.operator.trail import Sessions
from activities.sisbajud.route_check import check_routes
from activities.sisbajud.routing import DOCUMENT_KEYS, Preflight, preflight, validate_document
from activities.sisbajud.systemplane import SystemplaneUnavailable, current_documents
from shared.db.models import utcnow
from shared.db.sisbajud_models import SisbajudRoutingDocument
from shared.errors import ErrorCode, EsteiraError
from shared.settings import Settings


def _known(key: str) -> None:
    if key not in DOCUMENT_KEYS:
        raise EsteiraError(ErrorCode.NOT_FOUND,
                           f"No routing document {key}; use one of {', '.join(DOCUMENT_KEYS)}.")


def _document(row: SisbajudRoutingDocument) -> dict[str, Any]:
    return {"key": row.key, "document": row.document, "version": row.version,
            "updatedBy": row.updated_by, "updatedAt": row.updated_at.isoformat()}


async def routing_preflight(sessions: Sessions, settings: Settings,
                            http: httpx.AsyncClient | None = None) -> dict[str, Any]:
    """Check the documents against the configured institutions, and each route id they name
    against the institution's Midaz, before routes are switched on."""
    try:
        documents = await current_documents(settings, sessions)
    except SystemplaneUnavailable as exc:
        report = Preflight(settings.sisbajud.systemplane_enabled)
        report.problems.append({"code": "routing.systemplane-unavailable", "detail": str(exc)})
        return report.to_json()
    report = preflight(settings, documents)
    if report.problems:  # only documents that parse name routes to ask about
        return report.to_json()
    if http is not None:
        await check_routes(settings, documents, http, report)
    else:
        async with httpx.AsyncClient(timeout=settings.sisbajud.http_timeout_seconds) as own:
            await check_routes(settings, documents, own, report)
    return report.to_json()


async def get_routing_document(sessions: Sessions, key: str) -> dict[str, Any]:
    """One stored routing document (404 when unknown or not set)."""
    _known(key)
    async with sessions() as session:
        row = await session.get(SisbajudRoutingDocument, key)
    if row is None:
        raise EsteiraError(ErrorCode.NOT_FOUND, f"Routing document {key} is not set.")
    return _document(row)


async def put_routing_document(sessions: Sessions, key: str, document: dict[str, Any],
                               actor: str) -> dict[str, Any]:
    """Replace a routing document (validated; deferred writes pick it up on their next try)."""
    _known(key)
    try:
        canonical = validate_document(key, document)
    except ValidationError as exc:
        raise EsteiraError(ErrorCode.REQUEST_INVALID,
                           f"{key} is not valid: {exc.error_count()} error(s): "
                           + "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                                       for e in exc.errors())) from exc
    async with sessions() as session:
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
