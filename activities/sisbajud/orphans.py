"""Orphan check: operations on our block accounts whose transaction we did not write."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.sisbajud import orphan_cursor
from activities.sisbajud.clients import MidazClient, UpstreamError, midaz_for
from activities.sisbajud.metrics import ORPHAN_SCAN_ACCOUNTS, ORPHAN_SCANS, ORPHANS_FOUND
from activities.sisbajud.reconcile import midaz_day, midaz_second
from activities.sisbajud.store import insert_ignore, raise_alarm
from shared.contracts.sisbajud import AlarmCode
from shared.db.models import utcnow
from shared.db.sisbajud_models import SisbajudOrphan, SisbajudWrite
from shared.settings import Settings

log = logging.getLogger("esteira.sisbajud")
MAX_REMEMBERED = 100_000  # transaction ids judged ours, kept between ticks
# Accounts read at once: the tick's drain (the orders' results) waits for this stage.
READS_IN_FLIGHT = 8


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
        self._account_ids: dict[str, str] = {}  # alias -> Midaz account id (never changes)
        # Transactions judged ours: their operations are skipped on later ticks, no re-read.
        self._ours: set[str] = set()

    async def scan(self) -> OrphanScan:
        """One tick: the block accounts written since the cursor, plus the next sweep slice;
        each read over the window.

        A failing scan keeps its cursor (the next tick reads the same accounts again) and
        raises `ledger.orphan-scan-failed` once per run of failures.
        """
        sis = self._settings.sisbajud
        now = utcnow()
        window_start = now - timedelta(seconds=sis.orphan_reconcile_window_seconds)
        cursor = await orphan_cursor.load(self._sessions)
        since = window_start
        if cursor.recent_until is not None:
            since = max(window_start, cursor.recent_until
                        - timedelta(seconds=sis.orphan_scan_overlap_seconds))
        scan = OrphanScan()
        try:
            recent = await orphan_cursor.written_since(self._sessions, since)
            unread = await self._read(recent, window_start, now, scan)
            ORPHAN_SCAN_ACCOUNTS.labels("recent").inc(len(recent))
            size = sis.orphan_sweep_accounts_per_tick
            swept = await orphan_cursor.sweep_slice(self._sessions, cursor.sweep_after, size)
            watched = set(recent)
            others = [a for a in swept if a not in watched]
            await self._read(others, window_start, now, scan)
            ORPHAN_SCAN_ACCOUNTS.labels("sweep").inc(len(others))
        except Exception as exc:
            await self._failed(cursor.failing_since, f"{type(exc).__name__}: {exc}")
            raise
        sweep_after = swept[-1][1] if len(swept) == size else None  # None: start over
        if scan.failed_accounts:
            await self._failed(cursor.failing_since,
                               f"{scan.failed_accounts} block accounts could not be read",
                               sweep_after=sweep_after)
        else:
            # An operation whose transaction Midaz does not show yet is read again next tick.
            await orphan_cursor.save(self._sessions, recent_until=min([now, *unread]),
                                     sweep_after=sweep_after, failing_since=None)
            ORPHAN_SCANS.labels("ok").inc()
        return scan

    async def scan_everything(self) -> OrphanScan:
        """Every block account ever written, over the whole window, no cursor (the old way)."""
        now = utcnow()
        start = now - timedelta(
            seconds=self._settings.sisbajud.orphan_reconcile_window_seconds)
        scan = OrphanScan()
        accounts = await orphan_cursor.every_account(self._sessions)
        await self._read(accounts, start, now, scan, cached=False)
        return scan

    async def _failed(self, failing_since: datetime | None, reason: str,
                      **values: object) -> None:
        ORPHAN_SCANS.labels("failed").inc()
        try:
            if failing_since is None:
                async with self._sessions() as session:
                    await raise_alarm(session, AlarmCode.ORPHAN_SCAN_FAILED.value,
                                      f"The orphan check failed: {reason}", reason=reason)
                    await session.commit()
            await orphan_cursor.save(self._sessions, failing_since=failing_since or utcnow(),
                                     **values)
        except (SQLAlchemyError, OSError) as exc:  # the store itself is what failed
            log.error("Could not record the orphan check's failure: %s", exc)

    async def _read(self, accounts: list[orphan_cursor.Account], start: datetime,
                    now: datetime, scan: OrphanScan, *, cached: bool = True) -> list[datetime]:
        """Read each account's operations since `start`; the moments left unread."""
        first, end = midaz_second(start), midaz_day(now + timedelta(days=1))
        gate = asyncio.Semaphore(READS_IN_FLIGHT)

        async def read(institution_id: str, alias: str) -> list[datetime]:
            async with gate:
                try:
                    midaz = midaz_for(self._http, self._settings, institution_id)
                    return await self._account(midaz, institution_id, alias, first, end, scan,
                                               cached)
                except (UpstreamError, LookupError, httpx.HTTPError) as exc:
                    # One unreadable account must not hide the others' orphans.
                    scan.failed_accounts += 1
                    log.warning("Orphan check of %s failed: %s", alias, exc)
                    return []

        reads = [asyncio.ensure_future(read(*account)) for account in accounts]
        try:
            return [moment for moments in await asyncio.gather(*reads) for moment in moments]
        except BaseException:
            for pending in reads:  # a store failure ends the scan: stop the other reads too
                pending.cancel()
            raise

    async def _account_id(self, midaz: MidazClient, alias: str, cached: bool) -> str | None:
        if cached and alias in self._account_ids:
            return self._account_ids[alias]
        account = await midaz.account_by_alias(alias)
        if account is None:
            return None  # created on the first write, which may not have happened yet
        self._account_ids[alias] = account["id"]
        return account["id"]

    async def _account(self, midaz: MidazClient, institution_id: str, alias: str, start: str,
                       end: str, scan: OrphanScan, cached: bool) -> list[datetime]:
        account_id = await self._account_id(midaz, alias, cached)
        if account_id is None:
            return []
        scan.accounts += 1
        transactions: dict[str, dict[str, Any] | None] = {}
        seen: list[tuple[dict[str, Any], str | None]] = []
        unread: list[datetime] = []
        operations = await midaz.operations(account_id, start, end)
        scan.operations += len(operations)
        if cached and any((op.get("transactionId") or "") not in self._ours
                          for op in operations):
            # Midaz answered our own writes with these ids: no need to read them back.
            self._ours |= await self._applied_transactions(alias)
        for op in operations:
            tx_id = op.get("transactionId") or ""
            if cached and tx_id in self._ours:
                continue  # our write's answer named it, or its code is ours: never an orphan
            if tx_id not in transactions:
                transactions[tx_id] = await midaz.transaction(tx_id) if tx_id else None
            if tx_id and transactions[tx_id] is None:
                # Not readable yet (write lag): judged on a later cycle, not guessed.
                unread += [m for m in [_moment(op.get("createdAt"))] if m is not None]
                continue
            code = ((transactions[tx_id] or {}).get("metadata") or {}).get("code")
            seen.append((op, str(code) if code is not None else None))
        ours = await self._recorded({code for _, code in seen if code is not None})
        if len(self._ours) > MAX_REMEMBERED:
            self._ours.clear()  # bounded: forgetting costs one more read, nothing else
        for op, code in seen:
            if code in ours:
                self._ours.add(op.get("transactionId") or "")
                continue
            if await self._record(institution_id, alias, account_id, op, code):
                scan.new_orphans += 1
        return unread

    async def _applied_transactions(self, alias: str) -> set[str]:
        """Ids of the transactions Midaz reported for our writes on block account `alias`."""
        async with self._sessions() as session:
            return set((await session.exec(select(SisbajudWrite.transaction_id).where(
                SisbajudWrite.block_alias == alias,
                SisbajudWrite.transaction_id.is_not(None)))).all())  # type: ignore[union-attr]

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
