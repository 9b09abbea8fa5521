"""Organizations, ledgers, assets, accounts and balances."""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from services.simulators.midaz import queries
from services.simulators.midaz.deps import LedgerDep, RouteFault, Sim, check_uuid
from services.simulators.midaz.errors import MidazError
from services.simulators.midaz.model import iso, omit_empty
from services.simulators.midaz.schemas import (
    CreateAccount,
    CreateAccountType,
    CreateAsset,
    CreateLedger,
    CreateOrganization,
    UpdateBalance,
    decode,
)

router = APIRouter(prefix="/v1/organizations")
LEDGER = "/{organization_id}/ledgers/{ledger_id}"


@router.post("", name="organizations.create", status_code=201)
async def create_organization(request: Request, state: Sim, _f: RouteFault) -> dict:
    body = decode(CreateOrganization, await request.body(), "Organization")
    with state.lock:
        return state.add_organization(body.model_dump(exclude_none=True))


@router.get("/{organization_id}", name="organizations.get")
async def get_organization(organization_id: str, state: Sim, _f: RouteFault) -> dict:
    check_uuid(organization_id=organization_id)
    with state.lock:
        org = state.organizations.get(organization_id)
    if org is None:
        raise MidazError("0038", entity_type="Organization")
    return org


@router.post("/{organization_id}/ledgers", name="ledgers.create", status_code=201)
async def create_ledger(organization_id: str, request: Request, state: Sim, _f: RouteFault) -> dict:
    check_uuid(organization_id=organization_id)
    body = decode(CreateLedger, await request.body(), "Ledger")
    with state.lock:
        ledger = state.add_ledger(organization_id, body.name)
    return _ledger_json(ledger)


@router.get(LEDGER, name="ledgers.get")
async def get_ledger(ledger: LedgerDep, _f: RouteFault) -> dict:
    return _ledger_json(ledger)


@router.patch(LEDGER + "/settings", name="ledgers.settings")
async def patch_settings(request: Request, ledger: LedgerDep, state: Sim, _f: RouteFault) -> dict:
    try:
        payload: dict[str, Any] = json.loads(await request.body() or b"{}")
    except json.JSONDecodeError as exc:
        raise MidazError("0094", f"invalid JSON: {exc.msg}") from exc
    accounting = payload.get("accounting") or {}
    with state.lock:
        if "validateAccountType" in accounting:
            ledger.validate_account_type = bool(accounting["validateAccountType"])
    return {
        "accounting": {
            "validateAccountType": ledger.validate_account_type,
            "validateRoutes": False,
            "requireHolder": False,
        }
    }


@router.post(LEDGER + "/assets", name="assets.create", status_code=201)
async def create_asset(request: Request, ledger: LedgerDep, state: Sim, _f: RouteFault) -> dict:
    body = decode(CreateAsset, await request.body(), "Asset")
    if body.code != body.code.upper():
        raise MidazError("0004", status=400, entity_type="Asset")
    with state.lock:
        state.add_asset(ledger, body.code)
    return {
        "name": body.name,
        "type": body.type,
        "code": body.code,
        "organizationId": ledger.organization_id,
        "ledgerId": ledger.id,
        "status": {"code": "ACTIVE", "description": None},
    }


@router.post(LEDGER + "/account-types", name="account_types.create", status_code=201)
async def create_account_type(
    request: Request, ledger: LedgerDep, state: Sim, _f: RouteFault
) -> dict:
    body = decode(CreateAccountType, await request.body(), "AccountType")
    with state.lock:
        if body.keyValue in ledger.account_types:
            raise MidazError("0108", status=409, entity_type="AccountType")
        ledger.account_types.add(body.keyValue)
    return body.model_dump()


@router.post(LEDGER + "/accounts", name="accounts.create", status_code=201)
async def create_account(request: Request, ledger: LedgerDep, state: Sim, _f: RouteFault) -> dict:
    body = decode(CreateAccount, await request.body(), "Account")
    with state.lock:
        return state.add_account(ledger, body).to_json()


@router.get(LEDGER + "/accounts", name="accounts.list")
async def list_accounts(request: Request, ledger: LedgerDep, state: Sim, _f: RouteFault) -> dict:
    params = request.query_params
    with state.lock:
        query = queries.parse(params, state.clock(), state.config.window_months)
        # `alias` is a case-insensitive prefix match, like `lower(alias) LIKE lower(?)||'%'`.
        prefix = (params.get("alias") or "").lower()
        found = [
            a
            for a in state.alias_index.with_prefix(ledger.id, prefix)
            if _equals(params.get("type"), a.type)
            and _equals(params.get("asset_code"), a.asset_code)
            and _equals(params.get("status"), a.status.get("code"))
            and _equals(params.get("blocked"), str(a.blocked).lower())
            and queries.metadata_matches(a.metadata, query.metadata)
        ]
        return queries.page_page(found, query, lambda a: a.to_json())


def _equals(wanted: str | None, actual: Any) -> bool:
    return wanted is None or str(actual).lower() == wanted.lower()


@router.get(LEDGER + "/accounts/alias/{alias}", name="accounts.get_by_alias")
async def get_account_by_alias(alias: str, ledger: LedgerDep, state: Sim, _f: RouteFault) -> dict:
    with state.lock:
        account = state.account_by_alias(ledger, alias)
        if account is None:
            raise MidazError("0085", entity_type="Account")
        return account.to_json()


@router.get(LEDGER + "/accounts/alias/{alias}/balances", name="balances.by_alias")
async def balances_by_alias(alias: str, ledger: LedgerDep, state: Sim, _f: RouteFault) -> dict:
    with state.lock:
        account = state.account_by_alias(ledger, alias)
        # An unknown alias is an empty list, not a 404.
        items = [state.balances[account.id].to_json()] if account else []
    return {"items": items, "limit": 10}


@router.get(LEDGER + "/accounts/{account_id}", name="accounts.get")
async def get_account(account_id: str, ledger: LedgerDep, state: Sim, _f: RouteFault) -> dict:
    check_uuid(account_id=account_id)
    with state.lock:
        return state.account(ledger, account_id).to_json()


@router.get(LEDGER + "/accounts/{account_id}/balances", name="balances.by_account")
async def balances_by_account(
    account_id: str, ledger: LedgerDep, state: Sim, _f: RouteFault
) -> dict:
    check_uuid(account_id=account_id)
    with state.lock:
        account = state.account(ledger, account_id)
        return {"items": [state.balances[account.id].to_json()], "limit": 10}


@router.patch(LEDGER + "/balances/{balance_id}", name="balances.update")
async def update_balance(
    balance_id: str, request: Request, ledger: LedgerDep, state: Sim, _f: RouteFault
) -> JSONResponse:
    check_uuid(balance_id=balance_id)
    body = decode(UpdateBalance, await request.body(), "Balance")
    with state.lock:
        balance = next(
            (
                b
                for b in state.balances.values()
                if b.id == balance_id and b.account.ledger_id == ledger.id
            ),
            None,
        )
        if balance is None:
            raise MidazError("0007", entity_type="Balance")
        if body.allowSending is not None:
            balance.allow_sending = body.allowSending
        if body.allowReceiving is not None:
            balance.allow_receiving = body.allowReceiving
        settings = body.settings or {}
        if "allowOverdraft" in settings:
            balance.allow_overdraft = bool(settings["allowOverdraft"])
        if settings.get("overdraftLimitEnabled") is False:
            balance.overdraft_limit = None
        elif settings.get("overdraftLimit") is not None:
            try:
                balance.overdraft_limit = Decimal(str(settings["overdraftLimit"]))
            except InvalidOperation as exc:
                raise MidazError("0172", status=400) from exc
        balance.updated_at = state.clock()
        return JSONResponse(balance.to_json())


def _ledger_json(ledger: Any) -> dict:
    return {
        "id": ledger.id,
        "organizationId": ledger.organization_id,
        "name": ledger.name,
        "status": {"code": "ACTIVE", "description": None},
        "createdAt": iso(ledger.created_at),
        "updatedAt": iso(ledger.created_at),
        "deletedAt": None,
        **omit_empty(metadata=ledger.metadata),  # mmodel.Ledger: omitempty
    }
