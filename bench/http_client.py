"""Client CPU per call: the executor's pooled client (httpx over aiohttp) beside httpx's own.

The SISBAJUD worker makes about ten calls per order to the Mensageria and Midaz. This starts
a small FastAPI app under uvicorn on loopback (a JSON GET and a JSON POST, like a balance read
and a transaction) and sends the same calls, `--concurrency` at a time, through each client
in turn: httpx with its own transport and a 100-connection pool (the worker's client before),
`shared.http_client.pooled_client` (after), and aiohttp by itself (the floor). It prints the
client's CPU per call (user + system of this process) and calls per second.

Usage: .venv/bin/python bench/http_client.py [--calls 3000] [--concurrency 8] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp
import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from shared.http_client import pooled_client  # noqa: E402
from tests.support.ports import free_ports  # noqa: E402

APP = '''
from fastapi import FastAPI

app = FastAPI()


@app.get("/balances")
async def balances():
    return {"items": [{"alias": "@bench", "available": "1000.00", "onHold": "0.00"}]}


@app.post("/transactions")
async def transactions(body: dict):
    return {"id": "tx-1", "status": {"code": "APPROVED"}, **body}
'''
BODY = {"send": {"asset": "BRL", "value": "850.00"}, "metadata": {"code": "order-1:1"}}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def _httpx_pair(http: httpx.AsyncClient, url: str) -> None:
    (await http.get(f"{url}/balances")).json()
    (await http.post(f"{url}/transactions", json=BODY)).json()


async def _aiohttp_pair(http: aiohttp.ClientSession, url: str) -> None:
    async with http.get(f"{url}/balances") as response:
        await response.json()
    async with http.post(f"{url}/transactions", json=BODY) as response:
        await response.json()


async def _measure(pair: Callable[[object, str], Awaitable[None]], http, url: str,
                   calls: int, concurrency: int) -> tuple[float, float]:
    """(client CPU ms per call, calls per second) for `calls` calls, half GETs, half POSTs."""
    for _ in range(20):  # connections open, code warm
        await pair(http, url)
    pairs = calls // 2 // concurrency

    async def sender() -> None:
        for _ in range(pairs):
            await pair(http, url)

    started, cpu = time.perf_counter(), _cpu()
    await asyncio.gather(*(sender() for _ in range(concurrency)))
    elapsed, spent = time.perf_counter() - started, _cpu() - cpu
    sent = pairs * 2 * concurrency
    return 1000 * spent / sent, sent / elapsed


async def run(url: str, calls: int, concurrency: int) -> dict[str, tuple[float, float]]:
    """One measurement per client, in turn."""
    limits = httpx.Limits(max_connections=100, max_keepalive_connections=100)
    rows = {}
    async with httpx.AsyncClient(timeout=10, limits=limits) as http:
        rows["httpx, its own transport"] = await _measure(_httpx_pair, http, url, calls,
                                                          concurrency)
    async with pooled_client(timeout=10, connections=100) as http:
        rows["pooled_client (aiohttp)"] = await _measure(_httpx_pair, http, url, calls,
                                                         concurrency)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=100)) as http:
        rows["aiohttp alone (floor)"] = await _measure(_aiohttp_pair, http, url, calls,
                                                       concurrency)
    return rows


def _wait(url: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            httpx.get(f"{url}/balances", timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit(f"the loopback app never answered at {url}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    port = free_ports(1)[0]
    with tempfile.TemporaryDirectory(prefix="esteira-bench-http-") as tmp:
        (Path(tmp) / "bench_app.py").write_text(APP)
        server = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "bench_app:app", "--port", str(port),
             "--log-level", "warning", "--no-access-log"], cwd=tmp)
        try:
            url = f"http://127.0.0.1:{port}"
            _wait(url)
            print(f"{args.calls} calls per client, {args.concurrency} at a time, "
                  f"a uvicorn app on loopback")
            print(f"{'round':<6}{'client':<28}{'CPU ms/call':>12}{'calls/s':>9}")
            for number in range(1, args.rounds + 1):
                rows = asyncio.run(run(url, args.calls, args.concurrency))
                before = rows["httpx, its own transport"][0]
                for name, (cpu, rate) in rows.items():
                    print(f"{number:<6}{name:<28}{cpu:>12.3f}{rate:>9.0f}"
                          f"   {cpu / before:.2f} x httpx's")
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
