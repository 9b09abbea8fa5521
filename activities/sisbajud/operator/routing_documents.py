"""The accounting-route documents: read, replace (validated), preflight."""

from __future__ import annotations

from typing import Any

import httpx
from pydantic import ValidationError

from activities.sisbajud.operator.trail import Sessions
from activities.sisbajud.route_check import check_routes
from activities.sisbajud.routing import DOCUMENT_KEYS, Preflight, preflight, validate_document
from activities.sisbajud.systemplane import (
    SystemplaneUnavailable,
    current_documents,
    read_entry,
    write_entry,
)
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


def _systemplane(settings: Settings | None) -> tuple[str, str] | None:
    sis = settings.sisbajud if settings is not None else None
    if sis is None or sis.systemplane_dsn is None:
        return None
    return sis.systemplane_dsn.get_secret_value(), sis.systemplane_namespace


def _unavailable(exc: SystemplaneUnavailable) -> EsteiraError:
    return EsteiraError(ErrorCode.STORE_UNAVAILABLE, f"{exc}; retry.")


async def get_routing_document(sessions: Sessions, key: str,
                               settings: Settings | None = None) -> dict[str, Any]:
    """One routing document, from Systemplane when it is configured (404 when not set)."""
    _known(key)
    where = _systemplane(settings)
    if where is not None:
        try:
            entry = await read_entry(*where, key)
        except SystemplaneUnavailable as exc:
            raise _unavailable(exc) from exc
    else:
        async with sessions() as session:
            row = await session.get(SisbajudRoutingDocument, key)
        entry = _document(row) if row is not None else None
    if entry is None:
        raise EsteiraError(ErrorCode.NOT_FOUND, f"Routing document {key} is not set.")
    return entry


async def put_routing_document(sessions: Sessions, key: str, document: dict[str, Any],
                               actor: str, settings: Settings | None = None) -> dict[str, Any]:
    """Replace a routing document (validated; into Systemplane when it is configured, where
    every executor's feed reloads it; deferred writes pick it up on their next try)."""
    _known(key)
    try:
        canonical = validate_document(key, document)
    except ValidationError as exc:
        raise EsteiraError(ErrorCode.REQUEST_INVALID,
                           f"{key} is not valid: {exc.error_count()} error(s): "
                           + "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                                       for e in exc.errors())) from exc
    where = _systemplane(settings)
    if where is not None:
        try:
            return await write_entry(*where, key, canonical, actor)
        except SystemplaneUnavailable as exc:
            raise _unavailable(exc) from exc
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
