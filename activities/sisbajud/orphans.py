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
from activities.sisbajud.contracts.orders import BLOCK_ALIAS_PREFIX, AlarmCode
from activities.sisbajud.metrics import ORPHAN_SCAN_ACCOUNTS, ORPHAN_SCANS, ORPHANS_FOUND
from activities.sisbajud.models import SisbajudOrphan, SisbajudWrite
from activities.sisbajud.reconcile import midaz_day, midaz_second
from activities.sisbajud.store import insert_ignore, raise_alarm
from shared.db.models import utcnow
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
    orphans: int = 0  # orphan operations seen, new or already on record
    failed_accounts: int = 0
    feed_transactions: int = 0
    failed_feeds: int = 0


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
        # From the ledgers' feeds: block account -> its latest transaction inside the window;
        # transaction id -> (metadata.code, created at); ledger path -> read up to.
        self._active: dict[orphan_cursor.Account, datetime] = {}
        self._feed_codes: dict[str, tuple[str | None, datetime]] = {}
        self._feed_until: dict[str, datetime] = {}

    async def scan(self) -> OrphanScan:
        """One tick: every block account with operations inside the window, each read over
        the whole window.

        Those accounts are the ones this executor wrote to inside the window (its store) and
        the ones each ledger's transaction feed showed inside it (anyone's transaction: the
        feed is read from where the previous tick left off, the first tick from the window's
        start). The cost follows what happened inside the window, not how many block accounts
        exist. A failing scan raises `ledger.orphan-scan-failed` once per run of failures.
        """
        sis = self._settings.sisbajud
        now = utcnow()
        window_start = now - timedelta(seconds=sis.orphan_reconcile_window_seconds)
        cursor = await orphan_cursor.load(self._sessions)
        scan = OrphanScan()
        try:
            await self._follow_feeds(window_start, now, scan)
            written = await orphan_cursor.written_since(self._sessions, window_start)
            shown = [key for key, at in self._active.items() if at >= window_start]
            accounts = list(dict.fromkeys([*written, *shown]))
            await self._read(accounts, window_start, now, scan)
            ORPHAN_SCAN_ACCOUNTS.labels("written").inc(len(written))
            ORPHAN_SCAN_ACCOUNTS.labels("feed").inc(len(accounts) - len(written))
        except Exception as exc:
            await self._failed(cursor.failing_since, f"{type(exc).__name__}: {exc}")
            raise
        problems = [f"{n} {what} could not be read" for n, what in (
            (scan.failed_feeds, "ledger transaction feeds"),
            (scan.failed_accounts, "block accounts")) if n]
        if problems:
            await self._failed(cursor.failing_since, "; ".join(problems))
        else:
            await orphan_cursor.save(self._sessions, recent_until=now, failing_since=None)
            ORPHAN_SCANS.labels("ok").inc()
        return scan

    async def _follow_feeds(self, window_start: datetime, now: datetime,
                            scan: OrphanScan) -> None:
        """Read each ledger's transactions created since its last read; note the block
        accounts they touch (and their codes, so those transactions aren't fetched again)."""
        overlap = timedelta(seconds=self._settings.sisbajud.orphan_scan_overlap_seconds)
        ledgers: dict[str, tuple[str, MidazClient]] = {}
        for institution in self._settings.sisbajud.institutions:
            midaz = MidazClient.for_institution(self._http, self._settings, institution)
            ledgers.setdefault(midaz.ledger_path, (institution.id, midaz))
        for path, (institution_id, midaz) in ledgers.items():
            since = self._feed_until.get(path)
            # The overlap takes in transactions committed while the previous read ran.
            start = window_start if since is None else max(window_start, since - overlap)
            try:
                items = await midaz.transactions_between(
                    midaz_second(start), midaz_day(now + timedelta(days=1)))
            except (UpstreamError, httpx.HTTPError) as exc:
                scan.failed_feeds += 1  # its cursor stays: the next tick reads it again
                log.warning("Orphan check: the transactions of %s failed: %s", path, exc)
                continue
            scan.feed_transactions += len(items)
            for tx in items:
                self._note(institution_id, tx, now)
            self._feed_until[path] = now
        self._active = {k: at for k, at in self._active.items() if at >= window_start}
        self._feed_codes = {k: v for k, v in self._feed_codes.items() if v[1] >= window_start}

    def _note(self, institution_id: str, tx: dict[str, Any], now: datetime) -> None:
        aliases = {str(a) for a in [*(tx.get("source") or []), *(tx.get("destination") or [])]
                   if str(a).startswith(BLOCK_ALIAS_PREFIX)}
        if not aliases or not tx.get("id"):
            return
        at = _moment(tx.get("createdAt")) or now
        code = (tx.get("metadata") or {}).get("code")
        self._feed_codes[str(tx["id"])] = (str(code) if code is not None else None, at)
        for alias in aliases:
            key = (institution_id, alias)
            self._active[key] = max(self._active.get(key, at), at)

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
            if cached and tx_id in self._feed_codes:
                code = self._feed_codes[tx_id][0]
                seen.append((op, code))
                continue
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
            scan.orphans += 1
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
