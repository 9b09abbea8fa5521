"""The simulator's whole world: config, ledgers, accounts, balances, postings."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from services.simulators.fault_plan import FaultPlan
from services.simulators.midaz.aliases import AliasIndex
from services.simulators.midaz.errors import MidazError
from services.simulators.midaz.faults import Fault
from services.simulators.midaz.idempotency import IdempotencyStore
from services.simulators.midaz.model import (
    Account,
    Balance,
    Ledger,
    Operation,
    SimClock,
    Transaction,
    iso,
    uuid7,
)
from services.simulators.midaz.schemas import CreateAccount


@dataclass
class SimConfig:
    """Knobs settable at start-up and over `/_sim/config`."""

    lag_s: float = 0.0  # delay before metadata search and operations see a write
    error_style: str = "v4"  # "v4" problem+json as Midaz 4 renders errors; "v3" flat JSON
    window_months: int = 1  # MAX_PAGINATION_MONTH_DATE_RANGE


@dataclass
class MidazState:
    """Everything the simulator holds; one re-entrant lock guards all of it."""

    config: SimConfig
    clock: SimClock = field(default_factory=SimClock)
    lock: threading.RLock = field(default_factory=threading.RLock)
    organizations: dict[str, dict[str, Any]] = field(default_factory=dict)
    ledgers: dict[str, Ledger] = field(default_factory=dict)
    accounts: dict[str, Account] = field(default_factory=dict)
    balances: dict[str, Balance] = field(default_factory=dict)  # by account id
    transactions: dict[str, Transaction] = field(default_factory=dict)
    # Midaz reads an account's operations by index; a scan of every transaction made each read
    # cost more as the ledger grew, and the simulator shares the CPU it is benchmarked on.
    operations_by_account: dict[str, list[Operation]] = field(default_factory=dict)
    # The same for aliases: Midaz finds an account by alias through an index, and a scan of
    # every account made each order cost the simulator more than the one before.
    alias_index: AliasIndex = field(default_factory=AliasIndex)
    readable_at: dict[str, float] = field(default_factory=dict)  # tx id -> GET visibility
    instruments: list[dict[str, Any]] = field(default_factory=list)  # CRM
    # Accounting routes by id: operation routes and transaction routes (Midaz's route store).
    accounting_routes: dict[str, dict[str, Any]] = field(default_factory=dict)
    faults: FaultPlan[Fault] = field(default_factory=FaultPlan)
    idempotency: IdempotencyStore = field(init=False)

    def __post_init__(self) -> None:
        self.idempotency = IdempotencyStore(self.clock)

    def reset(self, config: SimConfig) -> None:
        """Forget everything and go back to `config`."""
        with self.lock:
            self.config = config
            self.clock.offset = 0.0
            for table in (
                self.organizations,
                self.ledgers,
                self.accounts,
                self.balances,
                self.transactions,
                self.operations_by_account,
                self.readable_at,
                self.accounting_routes,
            ):
                table.clear()
            self.alias_index.clear()
            self.instruments.clear()
            self.faults.clear()
            self.idempotency.flush()

    # --- organizations, ledgers, assets -------------------------------------------------

    def add_organization(self, body: dict[str, Any], org_id: str | None = None) -> dict:
        """Store an organization and return its JSON."""
        now = iso(self.clock())
        org = {
            "id": org_id or uuid7(),
            **body,
            "createdAt": now,
            "updatedAt": now,
            "deletedAt": None,
        }
        org.setdefault("status", {"code": "ACTIVE", "description": None})
        self.organizations[org["id"]] = org
        return org

    def ledger(self, org_id: str, ledger_id: str) -> Ledger:
        """The ledger, or Midaz's 404 for the missing organization / ledger."""
        if org_id not in self.organizations:
            raise MidazError("0038", entity_type="Organization")
        ledger = self.ledgers.get(ledger_id)
        if ledger is None or ledger.organization_id != org_id:
            raise MidazError("0037", entity_type="Ledger")
        return ledger

    def add_ledger(self, org_id: str, name: str, ledger_id: str | None = None) -> Ledger:
        """Create a ledger under an existing organization."""
        if org_id not in self.organizations:
            raise MidazError("0038", entity_type="Organization")
        ledger = Ledger(ledger_id or uuid7(), org_id, name, self.clock())
        self.ledgers[ledger.id] = ledger
        return ledger

    def add_asset(self, ledger: Ledger, code: str) -> None:
        """Register an asset and its `@external/<code>` account, as Midaz does."""
        if code in ledger.assets:
            raise MidazError("0003", status=409, entity_type="Asset")
        ledger.assets.add(code)
        external = self._new_account(
            ledger, f"@external/{code}", "external", code, f"External {code}"
        )
        self.balances[external.id].direction = "debit"

    # --- accounts and balances ----------------------------------------------------------

    def _new_account(
        self, ledger: Ledger, alias: str, type_: str, asset: str, name: str, **extra: Any
    ) -> Account:
        now = self.clock()
        account = Account(
            uuid7(), ledger.organization_id, ledger.id, alias, type_, asset, name, now, **extra
        )
        self.accounts[account.id] = account
        self.balances[account.id] = Balance(uuid7(), account, now)
        self.alias_index.add(account)
        return account

    def alias_taken(self, ledger: Ledger, alias: str) -> bool:
        """Midaz's non-atomic `alias LIKE ?` check, where `_` matches any one character."""
        if "_" not in alias:
            return self.alias_index.exact(ledger.id, alias) is not None
        pattern = re.compile("".join("." if c == "_" else re.escape(c) for c in alias))
        # Only accounts that start with the text before the first `_` and end with the text
        # after the last can match; the longer of the two narrows the most (a block alias ends
        # with its order's id).
        prefix, suffix = alias[: alias.index("_")].lower(), alias[alias.rindex("_") + 1 :].lower()
        candidates = (
            self.alias_index.with_suffix(ledger.id, suffix)
            if len(suffix) > len(prefix)
            else self.alias_index.with_prefix(ledger.id, prefix)
        )
        return any(pattern.fullmatch(a.alias) for a in candidates)

    def add_account(self, ledger: Ledger, body: CreateAccount) -> Account:
        """`POST …/accounts` rules: asset exists, type registered if validated, alias free."""
        if body.assetCode not in ledger.assets:
            raise MidazError("0034", entity_type="Account")
        if (
            ledger.validate_account_type
            and body.type != "external"
            and body.type not in ledger.account_types
        ):
            raise MidazError("0066", entity_type="Account")
        if body.alias and "@external/" in body.alias:
            raise MidazError("0047", fields={"alias": "must not contain @external/"})
        if body.alias and self.alias_taken(ledger, body.alias):
            raise MidazError("0020", body.alias, entity_type="Account")
        account_id = uuid7()
        extra = {
            k: getattr(body, k)
            for k in ("parentAccountId", "entityId", "portfolioId", "segmentId")
            if getattr(body, k)
        }
        account = self._new_account(
            ledger,
            body.alias or account_id,
            body.type,
            body.assetCode,
            body.name or f"{body.assetCode} {body.type} account",
            status=(
                body.status.model_dump() if body.status else {"code": "ACTIVE", "description": None}
            ),
            blocked=body.blocked,
            holder_id=body.holderId,
            metadata=body.metadata,
            extra=extra,
        )
        return account

    def account(self, ledger: Ledger, account_id: str) -> Account:
        """An account by id (404 0052)."""
        account = self.accounts.get(account_id)
        if account is None or account.ledger_id != ledger.id:
            raise MidazError("0052", entity_type="Account")
        return account

    def account_by_alias(self, ledger: Ledger, alias: str) -> Account | None:
        """Exact, case-sensitive alias match (`WHERE alias = ?`)."""
        return self.alias_index.exact(ledger.id, alias)

    def balance_lookup(self, ledger: Ledger, aliases: Iterable[str]) -> dict[str, Balance]:
        """Default balances of the ledger's accounts among `aliases`, keyed by alias."""
        found = (self.alias_index.exact(ledger.id, alias) for alias in aliases)
        return {a.alias: self.balances[a.id] for a in found if a is not None}

    def set_balance(
        self,
        account: Account,
        available: Decimal,
        *,
        allow_overdraft: bool,
        overdraft_limit: Decimal | None,
    ) -> Balance:
        """Seed a balance directly (simulator shortcut, no transaction)."""
        balance = self.balances[account.id]
        balance.available = available
        balance.allow_overdraft = allow_overdraft
        balance.overdraft_limit = overdraft_limit
        balance.updated_at = self.clock()
        return balance

    # --- transactions -------------------------------------------------------------------

    def record(self, tx: Transaction, readable_at: float) -> None:
        """Keep a posted transaction; GET by id sees it from `readable_at`."""
        self.transactions[tx.id] = tx
        self.readable_at[tx.id] = readable_at
        for operation in tx.operations:
            self.operations_by_account.setdefault(operation.account.id, []).append(operation)

    def transaction(self, ledger: Ledger, tx_id: str) -> Transaction:
        """A readable transaction by id (404 0007)."""
        tx = self.transactions.get(tx_id)
        if tx is None or tx.ledger_id != ledger.id or self.readable_at.get(tx_id, 0) > self.clock():
            raise MidazError("0007", entity_type="Transaction")
        return tx
