"""`GET /api/jobs?status=Failed` p50/p99 at 1,000,000 jobs, on SQLite and PostgreSQL.

Beside each figure, in the same run and on the same database: the listing function alone
(`list_jobs()`, no HTTP) and a baseline, the plain
`SELECT * FROM jobs WHERE status = 'Failed' LIMIT 50` (no order, no cursor). Each store is
measured twice: migrated up to signer_0003 (before the listing index) and then at head.
Pages: the first page, and a page 200 pages deep reached by following `nextCursor`.
PostgreSQL runs in a throwaway cluster (as the tests' tier does).

Usage: .venv/bin/python bench/jobs_listing.py [--rows 1000000] [--samples 200]
                                              [--backends sqlite,postgres]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import httpx
from sqlalchemy import text

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from activities.signer.operator import JobFilter  # noqa: E402
from services.app import create_app  # noqa: E402
from services.app_context import ApiContext  # noqa: E402
from shared.db import migrate  # noqa: E402
from shared.db.engine import create_engine  # noqa: E402
from shared.settings import Settings  # noqa: E402
from shared.temporal import TemporalHandle  # noqa: E402
from tests.support.postgres import PostgresServer, find_bindir  # noqa: E402

API_KEY = "bench-api-key-0123456789"
PAGE = 50
DEEP = 200
BATCH = 50_000
BEFORE_INDEX = "signer_0003"
STATUSES = ["Completed"] * 90 + ["Failed"] * 5 + ["Canceled"] * 3 + ["Queued"] * 2
COLUMNS = ["id", "file_name", "original_path", "folder", "source", "profile_name", "format",
           "status", "error_code", "created_at", "completed_at", "updated_at", "version"]


def _rows(count: int, start: int = 0):
    """Jobs a second apart, oldest first; 5 % Failed, spread evenly."""
    base = datetime(2025, 1, 1, tzinfo=UTC)
    for n in range(start, min(start + BATCH, count)):
        status = STATUSES[n % len(STATUSES)]
        at = base + timedelta(seconds=n)
        yield (f"{n:08x}-0000-4000-8000-{n:012x}", f"doc-{n:07d}.pdf",
               f"/data/input/inbox/doc-{n:07d}.pdf", "inbox", "watcher", "default", "Pades",
               status, "document.corrupt" if status == "Failed" else None, at,
               None if status == "Queued" else at, at, 0)


def fill_sqlite(path: Path, count: int) -> None:
    """executemany in one transaction, timestamps in SQLAlchemy's SQLite text format."""
    def stored(value):
        return value.strftime("%Y-%m-%d %H:%M:%S.%f") if isinstance(value, datetime) else value

    statement = (f"INSERT INTO jobs ({', '.join(COLUMNS)}) "
                 f"VALUES ({', '.join('?' for _ in COLUMNS)})")
    connection = sqlite3.connect(path)
    try:
        with connection:
            for start in range(0, count, BATCH):
                connection.executemany(statement, ([stored(v) for v in row]
                                                   for row in _rows(count, start)))
        connection.execute("ANALYZE")
    finally:
        connection.close()


async def fill_postgres(dsn: str, count: int) -> None:
    """COPY, BATCH rows at a time."""
    connection = await asyncpg.connect(dsn)
    try:
        for start in range(0, count, BATCH):
            await connection.copy_records_to_table("jobs", records=list(_rows(count, start)),
                                                   columns=COLUMNS)
        await connection.execute("ANALYZE jobs")
    finally:
        await connection.close()


def _p(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return (statistics.median(ordered) * 1000,
            ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))] * 1000)


async def _timed(call, samples: int) -> tuple[float, float]:
    await call()  # warm the caches and the connection pool
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        await call()
        times.append(time.perf_counter() - start)
    return _p(times)


async def measure(url: str, data_dir: Path, samples: int) -> dict[str, tuple[float, float]]:
    """API first page, API deep page, baseline SELECT; p50/p99 in ms."""
    settings = Settings(data_dir=data_dir, database_url=url, api_key=API_KEY)
    engine = create_engine(settings.sqlalchemy_url)

    async def no_temporal():
        raise RuntimeError("the listing never needs Temporal")

    context = ApiContext.build(settings, engine, api_key=API_KEY,
                         temporal=TemporalHandle(no_temporal))
    headers = {"X-API-Key": API_KEY}
    transport = httpx.ASGITransport(app=create_app(context))
    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as api:
        async def page(cursor: str | None = None) -> dict:
            params = {"status": "Failed", "limit": PAGE, **({"cursor": cursor} if cursor else {})}
            answer = await api.get("/api/jobs", params=params, headers=headers)
            assert answer.status_code == 200, answer.text
            return answer.json()

        cursor = None
        for _ in range(DEEP):
            cursor = (await page(cursor))["nextCursor"]
        deep_cursor = cursor
        first = await _timed(page, samples)
        deep = await _timed(lambda: page(deep_cursor), samples)

    async def plain() -> None:
        async with engine.connect() as connection:
            rows = (await connection.execute(text(
                "SELECT * FROM jobs WHERE status = :status LIMIT :n"),
                {"status": "Failed", "n": PAGE})).all()
            assert len(rows) == PAGE

    filters = JobFilter(statuses=["Failed"])
    service = await _timed(lambda: context.faces.signer.jobs.page(filters, limit=PAGE),
                           samples)
    baseline = await _timed(plain, samples)
    async with engine.connect() as connection:
        explain = "EXPLAIN QUERY PLAN" if url.startswith("sqlite") else "EXPLAIN"
        plan = (await connection.execute(text(
            f"{explain} SELECT * FROM jobs WHERE status IN ('Failed') "
            "ORDER BY created_at DESC, id DESC LIMIT 51"))).all()
    print("  plan: " + " | ".join(str(row[-1]).strip() for row in plan), flush=True)
    await engine.dispose()
    return {"first": first, "deep": deep, "service": service, "baseline": baseline}


async def run_backend(backend: str, rows: int, samples: int, root: Path) -> list[tuple]:
    server = None
    if backend == "sqlite":
        db = root / "sqlite" / "esteira.db"
        db.parent.mkdir(parents=True)
        url = f"sqlite+aiosqlite:///{db}"
    else:
        bindir = find_bindir()
        if bindir is None:
            print("PostgreSQL binaries not found: skipping PostgreSQL", flush=True)
            return []
        server = PostgresServer.start(bindir)
        admin = await asyncpg.connect(f"postgresql://postgres@127.0.0.1:{server.port}/postgres")
        await admin.execute('CREATE DATABASE "bench"')
        await admin.close()
        url = server.url("bench")
    try:
        await asyncio.to_thread(migrate.upgrade, url, BEFORE_INDEX)
        started = time.perf_counter()
        if backend == "sqlite":
            await asyncio.to_thread(fill_sqlite, db, rows)
        else:
            await fill_postgres(f"postgresql://postgres@127.0.0.1:{server.port}/bench", rows)
        print(f"{backend}: {rows:,} rows inserted in {time.perf_counter() - started:.1f} s",
              flush=True)
        print(f"{backend} at {BEFORE_INDEX}:", flush=True)
        results = [(backend, BEFORE_INDEX, await measure(url, root / backend, samples))]
        started = time.perf_counter()
        await asyncio.to_thread(migrate.upgrade, url)
        print(f"{backend}: migrated to head (index build) in "
              f"{time.perf_counter() - started:.1f} s", flush=True)
        if backend == "postgres":
            connection = await asyncpg.connect(
                f"postgresql://postgres@127.0.0.1:{server.port}/bench")
            await connection.execute("ANALYZE jobs")
            await connection.close()
        print(f"{backend} at head:", flush=True)
        results.append((backend, "head", await measure(url, root / backend, samples)))
        return results
    finally:
        if server is not None:
            server.stop()


def report(rows: int, samples: int, results: list[tuple]) -> None:
    print(f"\nGET /api/jobs?status=Failed&limit={PAGE}, {rows:,} jobs (5 % Failed), "
          f"{samples} samples, ms p50 / p99")
    header = (f"{'store':<9} {'schema':<12} {'API page 1':>16} {f'API page {DEEP + 1}':>16} "
              f"{'list_jobs() p.1':>16} {'baseline SELECT':>16}")
    print(header)
    print("-" * len(header))
    for backend, schema, figures in results:
        cells = [f"{figures[k][0]:7.2f} / {figures[k][1]:6.2f}"
                 for k in ("first", "deep", "service", "baseline")]
        print(f"{backend:<9} {schema:<12} " + " ".join(f"{cell:>16}" for cell in cells))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--backends", default="sqlite,postgres")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="esteira-bench-jobs-"))
    root.chmod(0o777)
    try:
        results = []
        for backend in args.backends.split(","):
            results += await run_backend(backend.strip(), args.rows, args.samples, root)
        report(args.rows, args.samples, results)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
