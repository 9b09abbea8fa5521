"""Accounting routes of SISBAJUD writes: the two tenant documents, resolution, preflight."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.sisbajud.contracts.orders import is_uuid
from activities.sisbajud.models import SisbajudRoutingDocument
from shared.settings import Settings

ORGANIZATIONS = "routing.organizations"
LEDGER_BINDINGS = "routing.ledger_bindings"
DOCUMENT_KEYS = (ORGANIZATIONS, LEDGER_BINDINGS)
ACTIONS = ("block", "unblock")


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class OrganizationRouting(_Doc):
    """Whether one organization's writes carry accounting routes."""

    organization_id: str = Field(alias="organizationId", min_length=1)
    enabled: bool = True


class OrganizationsDocument(_Doc):
    """`routing.organizations`: `{"organizations": [{"organizationId", "enabled"}]}`."""

    organizations: list[OrganizationRouting] = Field(default_factory=list)


class ActionRoutes(_Doc):
    """The Midaz transaction route of one action and the operation routes of its legs."""

    transaction_route_id: str = Field(alias="transactionRouteId")
    source_route_id: str = Field(alias="sourceRouteId")
    destination_route_id: str = Field(alias="destinationRouteId")


class LedgerBinding(_Doc):
    """Routes of one ledger of an organization, per action (`block`, `unblock`)."""

    organization_id: str = Field(alias="organizationId", min_length=1)
    ledger_id: str = Field(alias="ledgerId", min_length=1)
    block: ActionRoutes | None = None
    unblock: ActionRoutes | None = None


class BindingsDocument(_Doc):
    """`routing.ledger_bindings`: `{"bindings": [LedgerBinding…]}`."""

    bindings: list[LedgerBinding] = Field(default_factory=list)


DOCUMENT_MODELS: dict[str, type[_Doc]] = {ORGANIZATIONS: OrganizationsDocument,
                                          LEDGER_BINDINGS: BindingsDocument}


def validate_document(key: str, document: Any) -> dict[str, Any]:
    """The document in canonical camelCase (KeyError: unknown key; ValidationError: shape)."""
    model = DOCUMENT_MODELS[key].model_validate(document)
    return model.model_dump(by_alias=True, exclude_none=True)


async def load_documents(session: AsyncSession) -> dict[str, Any]:
    """Both routing documents as stored (a missing one is absent from the dict)."""
    rows = (await session.exec(select(SisbajudRoutingDocument))).all()
    return {row.key: row.document for row in rows}


class Resolution(StrEnum):
    """What a write does about routes."""

    NONE = "NONE"  # routes are off for this organization: write without them
    ROUTES = "ROUTES"
    UNRESOLVABLE = "UNRESOLVABLE"  # routes are on but can't be worked out: defer


@dataclass(frozen=True)
class WriteRoutes:
    """How one write resolved its routes."""

    resolution: Resolution
    routes: ActionRoutes | None = None
    code: str = ""
    problem: str = ""


def _parse(documents: dict[str, Any], key: str) -> Any:
    raw = documents.get(key)
    return None if raw is None else DOCUMENT_MODELS[key].model_validate(raw)


def resolve(settings: Settings, documents: dict[str, Any], organization_id: str,
            ledger_id: str, action: str) -> WriteRoutes:
    """Routes of a write on `organization_id`/`ledger_id` for `action` (`block`/`unblock`)."""
    if not settings.sisbajud.systemplane_enabled:
        return WriteRoutes(Resolution.NONE)
    return _routes(documents, organization_id, ledger_id, action)


def routes_for(documents: dict[str, Any], organization_id: str, ledger_id: str,
               action: str) -> WriteRoutes:
    """Routes of a write as if routes were on (the preflight's view)."""
    return _routes(documents, organization_id, ledger_id, action)


def _routes(documents: dict[str, Any], organization_id: str, ledger_id: str,
            action: str) -> WriteRoutes:
    try:
        organizations = _parse(documents, ORGANIZATIONS)
        bindings = _parse(documents, LEDGER_BINDINGS)
    except ValidationError as exc:
        return WriteRoutes(Resolution.UNRESOLVABLE, code="routing.document-invalid",
                           problem=f"invalid routing document: {exc.error_count()} error(s)")
    if organizations is None:
        # Routes are on and their document is not there: never guess "no routes".
        return WriteRoutes(Resolution.UNRESOLVABLE, code="routing.document-missing",
                           problem=f"{ORGANIZATIONS} is not set")
    enabled = any(o.organization_id == organization_id and o.enabled
                  for o in organizations.organizations)
    if not enabled:
        return WriteRoutes(Resolution.NONE)
    if bindings is None:
        return WriteRoutes(Resolution.UNRESOLVABLE, code="routing.document-missing",
                           problem=f"{LEDGER_BINDINGS} is not set")
    binding = next((b for b in (bindings.bindings if bindings else [])
                    if b.organization_id == organization_id and b.ledger_id == ledger_id), None)
    if binding is None:
        return WriteRoutes(Resolution.UNRESOLVABLE, code="routing.binding-missing",
                           problem=f"no ledger binding for {organization_id}/{ledger_id}")
    routes: ActionRoutes | None = getattr(binding, action)
    if routes is None:
        return WriteRoutes(Resolution.UNRESOLVABLE, code="routing.action-missing",
                           problem=f"the ledger binding has no {action} routes")
    bad = [name for name, value in routes.model_dump(by_alias=True).items()
           if not is_uuid(value)]
    if bad:
        return WriteRoutes(Resolution.UNRESOLVABLE, code="routing.route-id-invalid",
                           problem=f"{action} route ids are not UUIDs: {', '.join(bad)}")
    return WriteRoutes(Resolution.ROUTES, routes)


@dataclass
class Preflight:
    """Problems (writes would be deferred) and warnings (config that does nothing)."""

    systemplane_enabled: bool
    problems: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The preflight report."""
        return {"ready": not self.problems, "systemplaneEnabled": self.systemplane_enabled,
                "problems": self.problems, "warnings": self.warnings}


def _finding(code: str, detail: str, **where: str | None) -> dict[str, Any]:
    return {"code": code, "detail": detail, **{k: v for k, v in where.items() if v}}


def preflight(settings: Settings, documents: dict[str, Any]) -> Preflight:
    """Check the routing documents against the configured institutions, as if routes were on."""
    report = Preflight(settings.sisbajud.systemplane_enabled)
    parsed: dict[str, Any] = {}
    for key in DOCUMENT_KEYS:
        try:
            parsed[key] = _parse(documents, key)
        except ValidationError as exc:
            report.problems.append(_finding("routing.document-invalid",
                                            f"{key}: {exc.error_count()} error(s)", key=key))
    if report.problems:
        return report
    organizations, bindings = parsed[ORGANIZATIONS], parsed[LEDGER_BINDINGS]
    if organizations is None:
        # With SYSTEMPLANE_ENABLED every write waits for it; without, nothing reads it.
        (report.problems if report.systemplane_enabled else report.warnings).append(_finding(
            "routing.document-missing", f"{ORGANIZATIONS} is not set: writes are deferred "
            "while routes are on", key=ORGANIZATIONS))
    enabled = {o.organization_id for o in (organizations.organizations if organizations else [])
               if o.enabled}
    if organizations is not None and not enabled:
        report.warnings.append(_finding("routing.no-organization-enabled",
                                        "no organization has routes enabled"))
    institutions = settings.sisbajud.institutions
    used = {(i.organization_id, i.ledger_id) for i in institutions}
    for org in sorted(enabled - {i.organization_id for i in institutions}):
        report.warnings.append(_finding("routing.organization-unknown",
                                        "routes are enabled for an organization no "
                                        "institution uses", organizationId=org))
    for binding in (bindings.bindings if bindings else []):
        if (binding.organization_id, binding.ledger_id) not in used:
            report.warnings.append(_finding("routing.binding-unused",
                                            "no institution writes to this ledger",
                                            organizationId=binding.organization_id,
                                            ledgerId=binding.ledger_id))
    for institution in institutions:
        if institution.organization_id not in enabled:
            continue
        where = dict(institutionId=institution.id, organizationId=institution.organization_id,
                     ledgerId=institution.ledger_id)
        for action in ACTIONS:
            routes = _routes(documents, institution.organization_id, institution.ledger_id,
                             action)
            if routes.resolution == Resolution.UNRESOLVABLE:
                report.problems.append(_finding(routes.code, routes.problem, action=action,
                                                **where))
                if routes.code in ("routing.binding-missing", "routing.document-missing"):
                    break  # one finding per institution, not one per action
    return report
