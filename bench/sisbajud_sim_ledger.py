"""The Midaz simulator's cost for one order's ledger calls as its ledger fills up.

The simulator shares the benchmark machine with the executor it is measured against
(`bench/sisbajud_webhook.py`), so a call that costs more as accounts accumulate makes later
rounds look slower. This times, in process (ASGI, no sockets), what one BLOQUEIO asks of it:
create the block account, find it by the `accounts?alias=` prefix listing, read the source's
balances by alias and post the block transaction; with an empty ledger as the baseline, then
with N accounts already there.

Usage: .venv/bin/python bench/sisbajud_sim_ledger.py [--accounts 1000 10000] [--orders 50]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from services.simulators.midaz import create_app  # noqa: E402
from services.simulators.midaz.schemas import CreateAccount  # noqa: E402
from services.simulators.midaz.testkit import bootstrap, client, seed_account, send  # noqa: E402


def _alias(n: int) -> str:
    return f"@block_sisbajud_{n:032x}"


async def one_ledger(accounts: int, orders: int) -> float:
    """Median ms of one order's calls with `accounts` block accounts already in the ledger."""
    app = create_app()
    async with client(app) as http:
        ref = await bootstrap(http)
        await seed_account(http, ref, "@source", available="100000000.00")
        state = app.state.sim
        ledger = next(iter(state.ledgers.values()))
        with state.lock:  # straight into the state: filling 10,000 over HTTP is not the point
            for n in range(accounts):
                state.add_account(ledger, CreateAccount(assetCode="BRL", type="deposit",
                                                        alias=_alias(n)))
        timings = []
        for n in range(accounts, accounts + orders):
            started = time.perf_counter()
            created = await http.post(f"{ref.base}/accounts", json={
                "assetCode": "BRL", "type": "deposit", "alias": _alias(n)})
            listed = await http.get(f"{ref.base}/accounts", params={"alias": _alias(n)})
            balances = await http.get(f"{ref.base}/accounts/alias/@source/balances")
            posted = await http.post(f"{ref.base}/transactions/json",
                                     json=send({"@source": "1.00"}, {_alias(n): "1.00"}))
            timings.append(time.perf_counter() - started)
            assert created.status_code == 201 and posted.status_code == 201, posted.text
            assert len(listed.json()["items"]) == 1 and balances.status_code == 200
        return 1000 * statistics.median(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--accounts", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--orders", type=int, default=50)
    args = parser.parse_args()
    asyncio.run(one_ledger(0, 5))  # warm-up: imports, first routes
    baseline = asyncio.run(one_ledger(0, args.orders))
    print(f"one order's Midaz calls (create account, alias listing, balances, transaction), "
          f"median of {args.orders}")
    print(f"  empty ledger (baseline): {baseline:6.2f} ms")
    for accounts in args.accounts:
        figure = asyncio.run(one_ledger(accounts, args.orders))
        print(f"  {accounts:>6,} accounts:        {figure:6.2f} ms  ({figure / baseline:.2f} x)")


if __name__ == "__main__":
    main()
