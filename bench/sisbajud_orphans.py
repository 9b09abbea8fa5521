"""SISBAJUD orphan check: the cost of one tick with N block accounts, the full scan (every
account ever written, the baseline) beside the window scan (the accounts written inside the
window plus those the ledger's transaction feed shows inside it), in the same run.

Some accounts written long ago get a foreign transaction inside the window: both scans must
find each of them (the `orphans` column), the window scan without reading the other accounts.

The ledger is an indexed in-process stand-in for Midaz (token, alias lookup, operations by
account and date, transactions by date, transaction by id), so the figures are the executor's
own work plus one call per request; `--latency-ms` adds a network round trip to each call.

Usage: .venv/bin/python bench/sisbajud_orphans.py [--accounts 300000] [--recent 200]
       [--foreign 20] [--latency-ms 0] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import json
import os
import platform
import sys
import tempfile
import time
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sqlalchemy import insert  # noqa: E402

from activities.sisbajud import orphan_cursor  # noqa: E402
from activities.sisbajud.contracts.orders import block_account_alias  # noqa: E402
from activities.sisbajud.models import SisbajudWrite  # noqa: E402
from activities.sisbajud.orphans import OrphanChecker, OrphanScan  # noqa: E402
from shared.db.engine import create_engine, session_factory  # noqa: E402
from shared.db.migrate import upgrade  # noqa: E402
from shared.db.models import utcnow  # noqa: E402
from shared.settings import InstitutionSettings, Settings, SisbajudSettings  # noqa: E402

MIDAZ = "http://midaz.bench"
ORG, LEDGER = str(uuid.uuid4()), str(uuid.uuid4())
INSTITUTION = "BENCHBANK"


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def _parse(value: str, end: bool) -> datetime:
    for fmt in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d"):
        try:
            moment = datetime.strptime(value, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
        return moment + timedelta(days=1) if end and fmt == "%Y-%m-%d" else moment
    raise ValueError(value)


class Ledger:
    """Accounts, their operations and transactions, indexed as a real ledger would be."""

    def __init__(self, latency_s: float) -> None:
        self.latency_s = latency_s
        self.by_alias: dict[str, dict] = {}
        self.operations: dict[str, list[dict]] = {}  # account id -> operations
        self.transactions: dict[str, dict] = {}
        self.by_time: list[tuple[datetime, str]] = []  # (createdAt, id), sorted when read
        self._sorted = True
        self.calls: Counter[str] = Counter()

    def account(self, alias: str) -> dict:
        """The block account `alias`, created on first use."""
        if alias not in self.by_alias:
            self.by_alias[alias] = {"id": str(uuid.uuid4()), "alias": alias}
            self.operations[self.by_alias[alias]["id"]] = []
        return self.by_alias[alias]

    def credit(self, alias: str, code: str | None, at: datetime) -> None:
        """One transaction crediting `alias` (`metadata.code` when it is ours)."""
        account = self.account(alias)
        tx_id = str(uuid.uuid4())
        self.transactions[tx_id] = {"id": tx_id, "source": ["@payer"], "destination": [alias],
                                    "metadata": {"code": code} if code else {},
                                    "createdAt": _iso(at)}
        self.by_time.append((at, tx_id))
        self._sorted = False
        self.operations[account["id"]].append({
            "id": str(uuid.uuid4()), "transactionId": tx_id, "type": "CREDIT",
            "direction": "credit", "amount": {"value": "1.00"}, "accountAlias": alias,
            "createdAt": _iso(at)})

    def _transactions(self, query: dict[str, str]) -> httpx.Response:
        if not self._sorted:
            self.by_time.sort()
            self._sorted = True
        start, end = _parse(query["start_date"], False), _parse(query["end_date"], True)
        first = int(query.get("cursor") or bisect.bisect_left(self.by_time, (start, "")))
        limit = int(query.get("limit", "10"))
        page = [tx_id for at, tx_id in self.by_time[first:first + limit] if at <= end]
        more = len(page) == limit and first + limit < len(self.by_time) \
            and self.by_time[first + limit][0] <= end
        return httpx.Response(200, json={"items": [self.transactions[t] for t in page],
                                         "next_cursor": str(first + limit) if more else ""})

    async def handle(self, request: httpx.Request) -> httpx.Response:
        """Answer one Midaz call."""
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        parts = urlsplit(str(request.url))
        path, query = parts.path, {k: v[0] for k, v in parse_qs(parts.query).items()}
        if path.endswith(("/oauth/token", "/oauth/access_token")):  # RFC 6749's or Lerian's
            self.calls["token"] += 1
            return httpx.Response(200, json={"access_token": "bench", "token_type": "Bearer",
                                             "expires_in": 3600, "accessToken": "bench",
                                             "tokenType": "Bearer", "expiresIn": 3600})
        if path.endswith("/operations"):
            self.calls["operations"] += 1
            start, end = _parse(query["start_date"], False), _parse(query["end_date"], True)
            items = [op for op in self.operations.get(path.split("/")[-2], [])
                     if start <= datetime.fromisoformat(op["createdAt"]) <= end]
            return httpx.Response(200, json={"items": items, "next_cursor": ""})
        if path.endswith("/transactions"):
            self.calls["transactions"] += 1
            return self._transactions(query)
        if "/transactions/" in path:
            self.calls["transaction"] += 1
            tx = self.transactions.get(path.rsplit("/", 1)[1])
            return httpx.Response(200, json=tx) if tx else httpx.Response(404, json={})
        if "/accounts/alias/" in path or path.endswith("/accounts"):
            self.calls["account by alias"] += 1
            alias = query.get("alias") or path.rsplit("/", 1)[1]
            account = self.by_alias.get(alias)
            if "/accounts/alias/" in path:
                return httpx.Response(200 if account else 404, json=account or {})
            return httpx.Response(200, json={"items": [account] if account else []})
        self.calls["other"] += 1
        return httpx.Response(404, json={"code": "0000"})


async def _seed(sessions, ledger: Ledger, accounts: int, recent: int, foreign: int) -> None:
    """`accounts` block accounts; `recent` of them written lately, the rest 3 to 90 days ago;
    `foreign` of those old ones credited by someone else an hour ago (the orphans to find)."""
    now = datetime.now(UTC)
    rows = []
    old = max(1, (accounts - recent) // max(foreign, 1))
    for n in range(accounts):
        order_id = str(uuid.uuid4())
        at = now - (timedelta(minutes=n % 600) if n < recent
                    else timedelta(days=3 + (n % 87), minutes=n % 1440))
        key = f"sisbajud:{order_id}:1:block"
        alias = block_account_alias(order_id)
        ledger.credit(alias, key, at)
        if n >= recent and (n - recent) % old == 0 and (n - recent) // old < foreign:
            ledger.credit(alias, None, now - timedelta(hours=1))
        rows.append({"idempotency_key": key, "order_id": order_id, "revision": 1,
                     "kind": "block", "institution_id": INSTITUTION, "block_alias": alias,
                     "total": "1.00", "legs": [], "state": "APPLIED", "created_at": at,
                     "updated_at": at})
    async with sessions() as session:
        connection = await session.connection()
        for chunk in range(0, len(rows), 5_000):
            await connection.execute(insert(SisbajudWrite), rows[chunk:chunk + 5_000])
        await session.commit()


async def _timed(ledger: Ledger, run) -> dict:
    ledger.calls.clear()
    started = time.perf_counter()
    scan: OrphanScan = await run()
    elapsed = time.perf_counter() - started
    return {"ms": elapsed * 1000, "requests": sum(ledger.calls.values()),
            "calls": dict(ledger.calls), "accounts": scan.accounts,
            "operations": scan.operations, "orphans": scan.orphans,
            "failed": scan.failed_accounts}


async def _full_scan(ledger: Ledger, checker: OrphanChecker, sessions, settings: Settings,
                     sample: int) -> dict:
    """`scan_everything`: list every account ever written, read each over the window. With
    `sample`, every k-th account is read and the reads' time and calls are scaled by k."""
    started = time.perf_counter()
    accounts = await orphan_cursor.every_account(sessions)
    listed_ms = (time.perf_counter() - started) * 1000
    step = max(1, len(accounts) // sample) if sample else 1
    now = utcnow()
    start = now - timedelta(seconds=settings.sisbajud.orphan_reconcile_window_seconds)

    async def read() -> OrphanScan:
        scan = OrphanScan()
        await checker._read(accounts[::step], start, now, scan, cached=False)
        return scan

    row = await _timed(ledger, read)
    row["ms"] = listed_ms + row["ms"] * step
    row["calls"] = {k: v * step for k, v in row["calls"].items()}
    for key in ("requests", "accounts", "operations"):
        row[key] *= step  # orphans: as found among the accounts it read
    row["scaled_by"] = step
    return row


async def run(args: argparse.Namespace, work: Path) -> dict:
    """Seed the store and the ledger, then time the full scan and two window-scan ticks."""
    url = f"sqlite+aiosqlite:///{work / 'bench.db'}"
    await asyncio.to_thread(upgrade, url)
    sis = SisbajudSettings(institutions=[InstitutionSettings(
        id=INSTITUTION, base_url=MIDAZ, organization_id=ORG, ledger_id=LEDGER)])
    settings = Settings(data_dir=work / "data", database_url=url, sisbajud=sis)
    ledger = Ledger(args.latency_ms / 1000)
    engine = create_engine(url)
    sessions = session_factory(engine)
    try:
        await _seed(sessions, ledger, args.accounts, args.recent, args.foreign)
        async with httpx.AsyncClient(transport=httpx.MockTransport(ledger.handle)) as http:
            # The window scan first: the full scan would record the orphans before it.
            checker = OrphanChecker(settings, sessions, http)
            results = {"after: first tick": await _timed(ledger, checker.scan),
                       "after: next tick": await _timed(ledger, checker.scan)}
            results["before: full scan"] = await _full_scan(
                ledger, OrphanChecker(settings, sessions, http), sessions, settings,
                args.baseline_sample)
    finally:
        await engine.dispose()
    return {"accounts": args.accounts, "recent": args.recent, "foreign": args.foreign,
            "window_h": sis.orphan_reconcile_window_seconds / 3600, "results": results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--accounts", type=int, default=300_000)
    parser.add_argument("--recent", type=int, default=200,
                        help="block accounts written within the window")
    parser.add_argument("--foreign", type=int, default=20,
                        help="old block accounts credited by someone else within the window")
    parser.add_argument("--baseline-sample", type=int, default=20_000,
                        help="accounts the full scan reads (scaled to all; 0: read all)")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="esteira-bench-") as tmp:
        report = asyncio.run(run(args, Path(tmp)))
    load = os.getloadavg()
    print(f"python {platform.python_version()}, {os.cpu_count()} cpu, load "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {report['accounts']} block accounts, "
          f"{report['recent']} written within the {report['window_h']:g} h window, "
          f"{report['foreign']} older ones credited by someone else within it, Midaz latency "
          f"{args.latency_ms:g} ms")
    print(f"{'one orphan-check tick':<24}{'ms':>9}{'Midaz calls':>13}{'accounts':>10}"
          f"{'ops':>7}{'orphans':>9}  calls")
    for name, row in sorted(report["results"].items()):
        print(f"{name:<24}{row['ms']:>9.0f}{row['requests']:>13}{row['accounts']:>10}"
              f"{row['operations']:>7}{row['orphans']:>9}  {row['calls']}")
    before, after = (report["results"][k]["ms"] for k in ("before: full scan",
                                                         "after: next tick"))
    print(f"steady-state tick: {before / after:.0f}x cheaper than the full scan")
    step = report["results"]["before: full scan"]["scaled_by"]
    if step > 1:
        print(f"(the full scan read every {step}th account; its reads' time and counts are "
              "scaled by that, the listing of all accounts is measured whole; its orphans are "
              "those among the accounts it read)")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
