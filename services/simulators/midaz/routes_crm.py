"""CRM lookups of a subject's accounts by document (legacy aliases, embedded instruments)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from services.simulators.midaz import queries
from services.simulators.midaz.deps import RouteFault, Sim, check_uuid
from services.simulators.midaz.errors import MidazError
from services.simulators.midaz.state import MidazState

router = APIRouter()

# query parameter -> how to read it from a stored instrument
FILTERS: dict[str, tuple[str, ...]] = {
    "document": ("document",),
    "holder_id": ("holderId",),
    "account_id": ("accountId",),
    "ledger_id": ("ledgerId",),
    "banking_details_branch": ("bankingDetails", "branch"),
    "banking_details_account": ("bankingDetails", "account"),
    "banking_details_iban": ("bankingDetails", "iban"),
}


def _dig(item: dict[str, Any], path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(item, dict):
            return None
        item = item.get(part)  # type: ignore[assignment]
    return item


def _search(state: MidazState, org_id: str, request: Request) -> dict[str, Any]:
    params = request.query_params
    with state.lock:
        query = queries.parse(params, state.clock(), state.config.window_months)
        found = [
            i
            for i in state.instruments
            if i["organizationId"] == org_id
            and all(
                str(_dig(i, path)) == params[name]
                for name, path in FILTERS.items()
                if name in params
            )
            and queries.metadata_matches(i.get("metadata"), query.metadata)
        ]
        return queries.page_page(found, query, dict)


@router.get("/v1/aliases", name="crm.aliases")
async def legacy_aliases(request: Request, state: Sim, _f: RouteFault) -> dict:
    """Legacy CRM (`crmMode=legacy`): the organization comes in `X-Organization-Id`."""
    org_id = request.headers.get("x-organization-id")
    if not org_id:
        raise MidazError("0009", fields={"X-Organization-Id": "header is required"})
    return _search(state, org_id, request)


@router.get("/v1/organizations/{organization_id}/instruments", name="crm.instruments")
async def instruments(organization_id: str, request: Request, state: Sim, _f: RouteFault) -> dict:
    """Embedded CRM as Midaz 4 serves it (`listInstruments`; no `/v2` route exists)."""
    check_uuid(organization_id=organization_id)
    return _search(state, organization_id, request)
