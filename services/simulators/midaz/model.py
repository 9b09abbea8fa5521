"""Ledger records held by the Midaz simulator and their JSON shapes."""

from __future__ import annotations

import os
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

ZERO = Decimal(0)


def fmt_decimal(value: Decimal) -> str:
    """Midaz's decimal output: a JSON string, no exponent, trailing zeros trimmed."""
    if value == 0:
        return "0"
    return format(value.normalize(), "f")


def omit_empty(**fields: Any) -> dict[str, Any]:
    """The fields that have a value: Midaz's `omitempty` drops nil maps and pointers."""
    return {name: value for name, value in fields.items() if value is not None}


def iso(ts: float | None) -> str | None:
    """RFC 3339 UTC timestamp with millisecond precision."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


_uuid_lock = threading.Lock()
_last_ms = 0
_seq = 0


def uuid7() -> str:
    """A UUIDv7 string (Midaz ids); monotonic within one process."""
    global _last_ms, _seq
    with _uuid_lock:
        ms = int(time.time() * 1000)
        if ms <= _last_ms:
            # Same or earlier millisecond: bump a 12-bit sequence so ids stay ordered.
            _seq += 1
            if _seq > 0xFFF:
                _last_ms, _seq = _last_ms + 1, 0
            ms = _last_ms
        else:
            _last_ms, _seq = ms, 0
        value = (ms << 80) | (0x7 << 76) | (_seq << 64) | (0b10 << 62)
        value |= int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
        return str(uuid.UUID(int=value))


class SimClock:
    """Simulator time: wall clock plus an offset moved by `/_sim/clock`."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        """Jump forward (TTL expiry, lag) without waiting."""
        self.offset += seconds


@dataclass
class Ledger:
    """A ledger with its assets and the settings the simulator honours."""

    id: str
    organization_id: str
    name: str
    created_at: float
    assets: set[str] = field(default_factory=set)
    account_types: set[str] = field(default_factory=set)
    validate_account_type: bool = False
    metadata: dict[str, Any] | None = None


@dataclass
class Account:
    """An account of one ledger."""

    id: str
    organization_id: str
    ledger_id: str
    alias: str
    type: str
    asset_code: str
    name: str
    created_at: float
    status: dict[str, Any] = field(default_factory=lambda: {"code": "ACTIVE", "description": None})
    blocked: bool = False
    holder_id: str | None = None
    metadata: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Midaz `Account` response."""
        return {
            "id": self.id,
            "name": self.name,
            "parentAccountId": self.extra.get("parentAccountId"),
            "entityId": self.extra.get("entityId"),
            "holderId": self.holder_id,
            "assetCode": self.asset_code,
            "organizationId": self.organization_id,
            "ledgerId": self.ledger_id,
            "portfolioId": self.extra.get("portfolioId"),
            "segmentId": self.extra.get("segmentId"),
            "status": self.status,
            "alias": self.alias,
            "type": self.type,
            "blocked": self.blocked,
            # mmodel.Account: `holderCheckSkipped` always; `metadata` omitempty.
            "holderCheckSkipped": False,
            "createdAt": iso(self.created_at),
            "updatedAt": iso(self.created_at),
            "deletedAt": None,
            **omit_empty(metadata=self.metadata),
        }


@dataclass
class Balance:
    """The `default` balance of an account (credit direction unless external)."""

    id: str
    account: Account
    created_at: float
    key: str = "default"
    available: Decimal = ZERO
    on_hold: Decimal = ZERO
    version: int = 1
    allow_sending: bool = True
    allow_receiving: bool = True
    direction: str = "credit"
    overdraft_used: Decimal = ZERO
    allow_overdraft: bool = False
    overdraft_limit: Decimal | None = None
    updated_at: float = 0.0

    def snapshot(self) -> dict[str, Any]:
        """The `balance` / `balanceAfter` block of an operation."""
        return {
            "available": fmt_decimal(self.available),
            "onHold": fmt_decimal(self.on_hold),
            "version": self.version,
            "overdraftUsed": fmt_decimal(self.overdraft_used),
        }

    def to_json(self) -> dict[str, Any]:
        """Midaz `Balance` response."""
        acc = self.account
        limit = self.overdraft_limit
        return {
            "id": self.id,
            "organizationId": acc.organization_id,
            "ledgerId": acc.ledger_id,
            "accountId": acc.id,
            "alias": acc.alias,
            "key": self.key,
            "assetCode": acc.asset_code,
            "available": fmt_decimal(self.available),
            "onHold": fmt_decimal(self.on_hold),
            "version": self.version,
            "accountType": acc.type,
            "allowSending": self.allow_sending,
            "allowReceiving": self.allow_receiving,
            "direction": self.direction,
            "overdraftUsed": fmt_decimal(self.overdraft_used),
            "settings": {
                "balanceScope": "transactional",
                "allowOverdraft": self.allow_overdraft,
                "overdraftLimitEnabled": limit is not None,
                "overdraftLimit": fmt_decimal(limit) if limit is not None else None,
            },
            "createdAt": iso(self.created_at),
            "updatedAt": iso(self.updated_at or self.created_at),
            "deletedAt": None,
        }


@dataclass
class Operation:
    """One balance movement of a transaction."""

    id: str
    transaction_id: str
    account: Account
    balance_id: str
    type: str
    direction: str
    amount: Decimal
    before: dict[str, Any]
    after: dict[str, Any]
    created_at: float
    visible_at: float
    balance_key: str = "default"
    description: str | None = None
    chart_of_accounts: str | None = None
    route_id: str | None = None
    metadata: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """Midaz `Operation` response."""
        acc = self.account
        return {
            "id": self.id,
            "transactionId": self.transaction_id,
            "description": self.description or "",
            "type": self.type,
            "assetCode": acc.asset_code,
            "chartOfAccounts": self.chart_of_accounts or "",
            "amount": {"value": fmt_decimal(self.amount)},
            "balance": self.before,
            "balanceAfter": self.after,
            "status": {"code": "APPROVED", "description": None},
            "accountId": acc.id,
            "accountAlias": acc.alias,
            "balanceKey": self.balance_key,
            "balanceId": self.balance_id,
            "organizationId": acc.organization_id,
            "ledgerId": acc.ledger_id,
            "route": "",
            "direction": self.direction,
            "balanceAffected": True,
            "createdAt": iso(self.created_at),
            "updatedAt": iso(self.created_at),
            "deletedAt": None,
            # mmodel.Operation: `routeId` and `metadata` omitempty.
            **omit_empty(routeId=self.route_id, metadata=self.metadata),
        }


@dataclass
class Transaction:
    """A posted transaction with its operations."""

    id: str
    organization_id: str
    ledger_id: str
    kind: str
    amount: Decimal
    asset_code: str
    description: str | None
    metadata: dict[str, Any] | None
    source: list[str]
    destination: list[str]
    operations: list[Operation]
    created_at: float
    visible_at: float
    route_id: str | None = None
    chart_of_accounts_group_name: str | None = None

    def to_json(self, status: str = "APPROVED") -> dict[str, Any]:
        """Midaz `Transaction` response (`CREATED` in the POST answer, `APPROVED` on GET)."""
        return {
            "id": self.id,
            "description": self.description or "",
            "status": {"code": status, "description": status},
            "amount": fmt_decimal(self.amount),
            "assetCode": self.asset_code,
            "chartOfAccountsGroupName": self.chart_of_accounts_group_name or "",
            "source": self.source,
            "destination": self.destination,
            "ledgerId": self.ledger_id,
            "organizationId": self.organization_id,
            "route": "",
            # Always sent: Midaz skipped neither the fees nor the tracer for these.
            "feesSkipped": False,
            "tracerSkipped": False,
            "createdAt": iso(self.created_at),
            "updatedAt": iso(self.created_at),
            "deletedAt": None,
            "operations": [op.to_json() for op in self.operations],
            # `parentTransactionId`, `routeId`, `metadata`: omitempty.
            **omit_empty(parentTransactionId=None, routeId=self.route_id,
                         metadata=self.metadata),
        }
