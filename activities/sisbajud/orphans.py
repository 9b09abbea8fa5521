"""Orphan check: operations on our block accounts whose transaction we did not write."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.sisbajud.clients import MidazClient, UpstreamError, midaz_for
from activities.sisbajud.reconcile import midaz_day, midaz_second
from shared.contracts.sisbajud import AlarmCode
from shared.db.models import utcnow
from shared.db.sisbajud_models import SisbajudOrphan, SisbajudWrite
from shared.db.sisbajud_store import insert_ignore, raise_alarm
from shared.settings import Settings
from shared.sisbajud_metrics import ORPHANS_FOUND

log = logging.getLogger("esteira.sisbajud")


@dataclass
class OrphanScan:
    """What one pass over the block accounts saw."""

    accounts: int = 0
    operations: int = 0
    new_orphans: int = 0
    failed_accounts: int = 0


def _moment(text: str | None) -> datetime | None:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


class OrphanChecker:
    """Reads the ledger only; records and alarms each orphan operation once."""

    def __init__(self, settings: Settings, sessions: async_sessionmaker[AsyncSession],
                 http: httpx.AsyncClient) -> None:
        self._settings = settings
        self._sessions = sessions
        self._http = http

    async def scan(self) -> OrphanScan:
        """Every block account this executor wrote to, over the reconcile window."""
        async with self._sessions() as session:
            accounts = (await session.exec(
                select(SisbajudWrite.institution_id, SisbajudWrite.block_alias)
                .where(SisbajudWrite.kind == "block").distinct())).all()
        now = utcnow()
        start = midaz_second(now - timedelta(
            seconds=self._settings.sisbajud.orphan_reconcile_window_seconds))
        end = midaz_day(now + timedelta(days=1))
        scan = OrphanScan()
        for institution_id, alias in accounts:
            try:
                midaz = midaz_for(self._http, self._settings, institution_id)
                await self._account(midaz, institution_id, alias, start, end, scan)
            except (UpstreamError, LookupError) as exc:
                # One unreadable account must not hide the others' orphans.
                scan.failed_accounts += 1
                log.warning("Orphan check of %s failed: %s", alias, exc)
        return scan

    async def _account(self, midaz: MidazClient, institution_id: str, alias: str, start: str,
                       end: str, scan: OrphanScan) -> None:
        account = await midaz.account_by_alias(alias)
        if account is None:
            return  # created on the first write, which may not have happened yet
        scan.accounts += 1
        transactions: dict[str, dict[str, Any] | None] = {}
        seen: list[tuple[dict[str, Any], str | None]] = []
        for op in await midaz.operations(account["id"], start, end):
            scan.operations += 1
            tx_id = op.get("transactionId") or ""
            if tx_id not in transactions:
                transactions[tx_id] = await midaz.transaction(tx_id) if tx_id else None
            if tx_id and transactions[tx_id] is None:
                continue  # not readable yet (write lag): judged on a later cycle, not guessed
            code = ((transactions[tx_id] or {}).get("metadata") or {}).get("code")
            seen.append((op, str(code) if code is not None else None))
        ours = await self._recorded({code for _, code in seen if code is not None})
        for op, code in seen:
            if code in ours:
                continue
            if await self._record(institution_id, alias, account["id"], op, code):
                scan.new_orphans += 1

    async def _recorded(self, codes: set[str]) -> set[str]:
        """The codes among `codes` that this executor registered before writing."""
        if not codes:
            return set()
        async with self._sessions() as session:
            return set((await session.exec(select(SisbajudWrite.idempotency_key).where(
                SisbajudWrite.idempotency_key.in_(codes)))).all())  # type: ignore[attr-defined]

    async def _record(self, institution_id: str, alias: str, account_id: str,
                      op: dict[str, Any], code: str | None) -> bool:
        amount = (op.get("amount") or {}).get("value")
        async with self._sessions() as session:
            new = await insert_ignore(session, SisbajudOrphan, {
                "operation_id": op["id"], "transaction_id": op.get("transactionId") or "",
                "institution_id": institution_id, "block_alias": alias,
                "account_id": account_id, "code": code, "type": op.get("type"),
                "direction": op.get("direction"),
                "amount": str(amount) if amount is not None else None,
                "operation_at": _moment(op.get("createdAt")), "found_at": utcnow()},
                ["operation_id"])
            if new:
                await raise_alarm(
                    session, AlarmCode.LEDGER_ORPHAN_OPERATION.value,
                    f"Operation {op['id']} on {alias} belongs to transaction "
                    f"{op.get('transactionId')} with "
                    + (f"code {code}, unknown here" if code else "no metadata.code"),
                    operation_id=op["id"], transaction_id=op.get("transactionId"),
                    block_alias=alias, transaction_code=code)
            await session.commit()
        if new:
            ORPHANS_FOUND.inc()
        return new
