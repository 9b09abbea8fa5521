"""SISBAJUD orphan check: the cost of one tick with N block accounts, the old full scan beside
the cursor + sweep scan, in the same run.

The ledger is an indexed in-process stand-in for Midaz (token, alias lookup, operations by
account and date, transaction by id), so the figures are the executor's own work plus one
call per request; `--latency-ms` adds a network round trip to each call.

Usage: .venv/bin/python bench/sisbajud_orphans.py [--accounts 10000] [--recent 200]
       [--latency-ms 0] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
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

from activities.sisbajud.orphans import OrphanChecker, OrphanScan  # noqa: E402
from shared.contracts.sisbajud import block_account_alias  # noqa: E402
from shared.db.engine import create_engine, session_factory  # noqa: E402
from shared.db.migrate import upgrade  # noqa: E402
from shared.db.sisbajud_models import SisbajudWrite  # noqa: E402
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
        self.calls: Counter[str] = Counter()

    def block(self, alias: str, code: str, at: datetime) -> None:
        """A block account holding one block transaction of ours (`metadata.code`)."""
        account = {"id": str(uuid.uuid4()), "alias": alias}
        tx_id = str(uuid.uuid4())
        self.by_alias[alias] = account
        self.transactions[tx_id] = {"id": tx_id, "metadata": {"code": code}}
        self.operations[account["id"]] = [{
            "id": str(uuid.uuid4()), "transactionId": tx_id, "type": "CREDIT",
            "direction": "credit", "amount": {"value": "1.00"}, "accountAlias": alias,
            "createdAt": _iso(at)}]

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


async def _seed(sessions, ledger: Ledger, accounts: int, recent: int) -> None:
    """`accounts` block accounts; `recent` of them written lately, the rest 3 to 90 days ago."""
    now = datetime.now(UTC)
    rows = []
    for n in range(accounts):
        order_id = str(uuid.uuid4())
        at = now - (timedelta(minutes=n % 600) if n < recent
                    else timedelta(days=3 + (n % 87), minutes=n % 1440))
        key = f"sisbajud:{order_id}:1:block"
        alias = block_account_alias(order_id)
        ledger.block(alias, key, at)
        rows.append(SisbajudWrite(idempotency_key=key, order_id=order_id, revision=1,
                                  kind="block", institution_id=INSTITUTION, block_alias=alias,
                                  total="1.00", state="APPLIED", created_at=at, updated_at=at))
    async with sessions() as session:
        session.add_all(rows)
        await session.commit()


async def _timed(ledger: Ledger, run) -> dict:
    ledger.calls.clear()
    started = time.perf_counter()
    scan: OrphanScan = await run()
    elapsed = time.perf_counter() - started
    return {"ms": elapsed * 1000, "requests": sum(ledger.calls.values()),
            "calls": dict(ledger.calls), "accounts": scan.accounts,
            "operations": scan.operations, "orphans": scan.new_orphans,
            "failed": scan.failed_accounts}


async def run(args: argparse.Namespace, work: Path) -> dict:
    """Seed the store and the ledger, then time the full scan and two cursor ticks."""
    url = f"sqlite+aiosqlite:///{work / 'bench.db'}"
    await asyncio.to_thread(upgrade, url)
    sis = SisbajudSettings(institutions=[InstitutionSettings(
        id=INSTITUTION, base_url=MIDAZ, organization_id=ORG, ledger_id=LEDGER)])
    settings = Settings(data_dir=work / "data", database_url=url, sisbajud=sis)
    ledger = Ledger(args.latency_ms / 1000)
    engine = create_engine(url)
    sessions = session_factory(engine)
    try:
        await _seed(sessions, ledger, args.accounts, args.recent)
        async with httpx.AsyncClient(transport=httpx.MockTransport(ledger.handle)) as http:
            results = {
                "before: full scan": await _timed(
                    ledger, OrphanChecker(settings, sessions, http).scan_everything)}
            checker = OrphanChecker(settings, sessions, http)
            results["after: first tick (no cursor)"] = await _timed(ledger, checker.scan)
            results["after: next tick"] = await _timed(ledger, checker.scan)
    finally:
        await engine.dispose()
    return {"accounts": args.accounts, "recent": args.recent,
            "sweep_per_tick": sis.orphan_sweep_accounts_per_tick,
            "window_h": sis.orphan_reconcile_window_seconds / 3600, "results": results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--accounts", type=int, default=10_000)
    parser.add_argument("--recent", type=int, default=200,
                        help="block accounts written within the window")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="esteira-bench-") as tmp:
        report = asyncio.run(run(args, Path(tmp)))
    load = os.getloadavg()
    print(f"python {platform.python_version()}, {os.cpu_count()} cpu, load "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {report['accounts']} block accounts, "
          f"{report['recent']} written within the {report['window_h']:g} h window, sweep "
          f"{report['sweep_per_tick']}/tick, Midaz latency {args.latency_ms:g} ms")
    print(f"{'one orphan-check tick':<32}{'ms':>9}{'Midaz calls':>13}{'accounts':>10}"
          f"{'ops':>7}  calls")
    for name, row in report["results"].items():
        print(f"{name:<32}{row['ms']:>9.0f}{row['requests']:>13}{row['accounts']:>10}"
              f"{row['operations']:>7}  {row['calls']}")
    before, after = (report["results"][k]["ms"] for k in ("before: full scan",
                                                         "after: next tick"))
    print(f"steady-state tick: {before / after:.0f}x cheaper than the full scan")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
