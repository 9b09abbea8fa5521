"""The accounting-route documents: read, replace (validated), preflight."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import httpx
from pydantic import ValidationError

from activities.sisbajud.models import SisbajudRoutingDocument
from activities.sisbajud.route_check import check_routes
from activities.sisbajud.routing import DOCUMENT_KEYS, Preflight, preflight, validate_document
from activities.sisbajud.systemplane import (
    SystemplaneUnavailable,
    current_documents,
    read_entry,
    write_entry,
)
from shared.db.engine import Sessions
from shared.db.models import utcnow
from shared.errors import ErrorCode, EsteiraError
from shared.settings import Settings


@dataclass(frozen=True)
class RoutingDocument:
    """A tenant document (`routing.organizations`, `routing.ledger_bindings`), its version
    and who wrote it last."""

    key: str
    document: dict[str, Any]
    version: int
    updated_by: str | None
    updated_at: datetime

    @classmethod
    def of_entry(cls, entry: dict[str, Any]) -> RoutingDocument:
        """A Systemplane entry as `read_entry` gives it."""
        return cls(entry["key"], entry["document"], entry["version"], entry["updatedBy"],
                   datetime.fromisoformat(entry["updatedAt"]))

    @classmethod
    def of_row(cls, row: SisbajudRoutingDocument) -> RoutingDocument:
        """A document kept in the store (Systemplane off)."""
        return cls(row.key, row.document, row.version, row.updated_by, row.updated_at)


def _known(key: str) -> None:
    if key not in DOCUMENT_KEYS:
        raise EsteiraError(ErrorCode.NOT_FOUND,
                           f"No routing document {key}; use one of {', '.join(DOCUMENT_KEYS)}.")


def _unavailable(exc: SystemplaneUnavailable) -> EsteiraError:
    return EsteiraError(ErrorCode.STORE_UNAVAILABLE, f"{exc}; retry.")


class RoutingDocuments:
    """The documents, in Systemplane when it is configured, else in the store."""

    def __init__(self, settings: Settings, sessions: Sessions,
                 http: httpx.AsyncClient | None = None) -> None:
        self._settings = settings
        self._sessions = sessions
        # Midaz for the preflight's route reads: a client given to the face, else one per
        # preflight (an operator's occasional check).
        self._http = http

    async def preflight(self) -> Preflight:
        """Check the documents against the configured institutions, and each route id they
        name against the institution's Midaz, before routes are switched on."""
        settings = self._settings
        try:
            documents = await current_documents(settings, self._sessions)
        except SystemplaneUnavailable as exc:
            report = Preflight(settings.sisbajud.systemplane_enabled)
            report.problems.append({"code": "routing.systemplane-unavailable",
                                    "detail": str(exc)})
            return report
        report = preflight(settings, documents)
        if report.problems:  # only documents that parse name routes to ask about
            return report
        if self._http is not None:
            await check_routes(settings, documents, self._http, report)
        else:
            async with httpx.AsyncClient(timeout=settings.sisbajud.http_timeout_seconds) as own:
                await check_routes(settings, documents, own, report)
        return report

    async def get(self, key: str) -> RoutingDocument:
        """One routing document, from Systemplane when it is configured (404 when not set)."""
        _known(key)
        where = self._systemplane()
        found: RoutingDocument | None
        if where is not None:
            try:
                entry = await read_entry(*where, key)
            except SystemplaneUnavailable as exc:
                raise _unavailable(exc) from exc
            found = RoutingDocument.of_entry(entry) if entry is not None else None
        else:
            async with self._sessions() as session:
                row = await session.get(SisbajudRoutingDocument, key)
            found = RoutingDocument.of_row(row) if row is not None else None
        if found is None:
            raise EsteiraError(ErrorCode.NOT_FOUND, f"Routing document {key} is not set.")
        return found

    async def put(self, key: str, document: dict[str, Any], actor: str) -> RoutingDocument:
        """Replace a routing document (validated; into Systemplane when it is configured,
        where every executor's feed reloads it; deferred writes pick it up on their next
        try)."""
        _known(key)
        try:
            canonical = validate_document(key, document)
        except ValidationError as exc:
            raise EsteiraError(ErrorCode.REQUEST_INVALID,
                               f"{key} is not valid: {exc.error_count()} error(s): "
                               + "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                                           for e in exc.errors())) from exc
        where = self._systemplane()
        if where is not None:
            try:
                return RoutingDocument.of_entry(await write_entry(*where, key, canonical,
                                                                  actor))
            except SystemplaneUnavailable as exc:
                raise _unavailable(exc) from exc
        async with self._sessions() as session:
            row = await session.get(SisbajudRoutingDocument, key)
            if row is None:
                row = SisbajudRoutingDocument(key=key, document=canonical, version=1)
            else:
                row.document, row.version = canonical, row.version + 1
            row.updated_by, row.updated_at = actor[:200], utcnow()
            session.add(row)
            await session.commit()
            await session.refresh(row)
        return RoutingDocument.of_row(row)

    def _systemplane(self) -> tuple[str, str] | None:
        sis = self._settings.sisbajud
        if sis.systemplane_dsn is None:
            return None
        return sis.systemplane_dsn.get_secret_value(), sis.systemplane_namespace
