"""`/_sim/*`: reset, config, clock, faults, idempotency store and seeding shortcuts."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from typing import Any, Literal

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from services.simulators.midaz.deps import Sim
from services.simulators.midaz.errors import MidazError
from services.simulators.midaz.faults import Fault
from services.simulators.midaz.model import iso, uuid7
from services.simulators.midaz.schemas import CreateAccount

router = APIRouter(prefix="/_sim")


class ConfigIn(BaseModel):
    """Partial update of the runtime knobs."""

    model_config = ConfigDict(extra="forbid")

    lag_s: float | None = Field(None, ge=0)
    error_style: Literal["v3", "v4"] | None = None
    window_months: int | None = Field(None, ge=1)


class BootstrapIn(BaseModel):
    """An organization + ledger with its assets; ids may be fixed by the caller."""

    model_config = ConfigDict(extra="forbid")

    organizationId: str | None = None
    ledgerId: str | None = None
    assets: list[str] = ["BRL"]


class SeedAccountIn(BaseModel):
    """An account created with a balance already in place."""

    model_config = ConfigDict(extra="forbid")

    organizationId: str
    ledgerId: str
    alias: str
    type: str = "deposit"
    assetCode: str = "BRL"
    available: Decimal = Decimal(0)
    allowOverdraft: bool = False
    overdraftLimit: Decimal | None = None
    blocked: bool = False
    status: str = "ACTIVE"
    holderId: str | None = None
    metadata: dict[str, Any] | None = None


@router.post("/reset")
def reset(request: Request, state: Sim) -> dict:
    state.reset(dataclasses.replace(request.app.state.initial_config))
    return {"reset": True}


@router.get("/config")
def get_config(state: Sim) -> dict:
    cfg = state.config
    return {
        "lag_s": cfg.lag_s,
        "error_style": cfg.error_style,
        "window_months": cfg.window_months,
    }


@router.post("/config")
def set_config(body: ConfigIn, state: Sim) -> dict:
    with state.lock:
        for name, value in body.model_dump(exclude_none=True).items():
            setattr(state.config, name, value)
    return get_config(state)


@router.post("/clock")
def advance_clock(body: dict[str, float], state: Sim) -> dict:
    """`{"advance_s": N}` moves simulator time (TTL expiry, lag) without waiting."""
    with state.lock:
        state.clock.advance(float(body.get("advance_s", 0)))
        return {"now": iso(state.clock()), "offset_s": state.clock.offset}


@router.get("/faults")
def list_faults(state: Sim) -> list[dict]:
    with state.lock:
        return state.faults.describe()


@router.post("/faults", status_code=201)
def add_fault(fault: Fault, state: Sim) -> list[dict]:
    with state.lock:
        state.faults.add(fault)
        return state.faults.describe()


@router.delete("/faults")
def clear_faults(state: Sim) -> dict:
    with state.lock:
        state.faults.clear()
    return {"cleared": True}


@router.get("/idempotency")
def list_keys(state: Sim) -> list[dict]:
    with state.lock:
        return state.idempotency.describe()


@router.post("/idempotency/flush")
def flush_keys(state: Sim) -> dict:
    with state.lock:
        state.idempotency.flush()
    return {"flushed": True}


@router.post("/bootstrap", status_code=201)
def bootstrap(body: BootstrapIn, state: Sim) -> dict:
    with state.lock:
        org_id = body.organizationId or uuid7()
        if org_id not in state.organizations:
            state.add_organization(
                {"legalName": "Simulated Bank", "legalDocument": "0"}, org_id=org_id
            )
        ledger_id = body.ledgerId or uuid7()
        if ledger_id not in state.ledgers:
            state.add_ledger(org_id, "sisbajud", ledger_id=ledger_id)
        ledger = state.ledger(org_id, ledger_id)
        for code in body.assets:
            if code not in ledger.assets:
                state.add_asset(ledger, code)
    return {"organizationId": org_id, "ledgerId": ledger_id}


@router.post("/accounts", status_code=201)
def seed_account(body: SeedAccountIn, state: Sim) -> dict:
    with state.lock:
        ledger = state.ledger(body.organizationId, body.ledgerId)
        account = state.add_account(
            ledger,
            CreateAccount(
                assetCode=body.assetCode,
                type=body.type,
                alias=body.alias,
                blocked=body.blocked,
                holderId=body.holderId,
                metadata=body.metadata,
                status={"code": body.status},
            ),
        )
        balance = state.set_balance(
            account,
            body.available,
            allow_overdraft=body.allowOverdraft,
            overdraft_limit=body.overdraftLimit,
        )
        return {"account": account.to_json(), "balance": balance.to_json()}


@router.post("/crm/instruments", status_code=201)
def seed_instruments(body: list[dict[str, Any]] | dict[str, Any], state: Sim) -> list[dict]:
    """CRM records (`organizationId`, `document`, `accountId`, `bankingDetails`, ...)."""
    items = body if isinstance(body, list) else [body]
    stored = []
    with state.lock:
        for item in items:
            if "organizationId" not in item or "document" not in item:
                raise MidazError("0009", fields={"organizationId/document": "required"})
            now = iso(state.clock())
            record = {
                "id": uuid7(),
                "type": "NATURAL_PERSON",
                "metadata": None,
                **item,
                "createdAt": now,
                "updatedAt": now,
                "deletedAt": None,
            }
            state.instruments.append(record)
            stored.append(record)
    return stored


@router.get("/transactions")
def all_transactions(state: Sim) -> list[dict]:
    """Every posted transaction, hidden or not, with its visibility times."""
    with state.lock:
        return [
            {
                **tx.to_json(),
                "_kind": tx.kind,
                "_visibleAt": iso(tx.visible_at),
                "_readableAt": iso(state.readable_at.get(tx.id)),
            }
            for tx in state.transactions.values()
        ]
