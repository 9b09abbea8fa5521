"""Pickup sweeps and per-entity timers at scale: time, rows/s, memory, firing lateness.

    .venv/bin/python bench/pickup_sweeps.py               # half the issue's scale, ~1.5 minutes
    .venv/bin/python bench/pickup_sweeps.py --students 100000 --authorizations 1000000 \
        --timers 10000                                    # the issue's scale, ~8 minutes
    .venv/bin/python bench/pickup_sweeps.py --database-url postgresql://user@host/db

Sweeps run the reconciler activities directly on a fresh store (SQLite under a temp dir by
default). Baselines printed beside them: for sweeps, a naive one-row-per-transaction ORM loop
over a sample; for timers, the seed's cron cadence (a READY reverted by a 5-minute sweep is
late by up to 5 minutes).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import bindparam
from sqlmodel import select

from activities.pickup.access import hash_token
from activities.pickup.contracts.board import (
    RunSweepInput,
    Sweep,
    TimerInput,
    TimerKind,
    TimerResult,
)
from activities.pickup.contracts.names import ENTITY_TIMER_WORKFLOW, FIRE_TIMER_ACTIVITY
from activities.pickup.models import (
    AccessToken,
    Arrival,
    AuditEntry,
    AuthorizedPerson,
    EarlyRelease,
    Guardian,
    GuardianLink,
    School,
    Student,
)
from activities.pickup.sweeps import PickupSweeps
from shared.db import migrate
from shared.db.engine import create_engine, session_factory
from shared.db.models import utcnow
from shared.settings import PickupSettings, normalise_database_url

CHUNK = 10_000


class NoKicks:
    """The bench measures the store; drains and timers are not started."""

    async def drains(self, controllers=(), notifications: bool = False) -> None:
        return None


def rss_mb() -> float:
    """Resident memory of this process."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def _bulk(sessions, model, rows: list[dict]) -> None:
    for start in range(0, len(rows), CHUNK):
        async with sessions() as session, session.begin():
            await session.exec(model.__table__.insert(), params=rows[start:start + CHUNK])


async def populate(sessions, args) -> dict[str, int]:
    """Schools, students (some stuck READY / AWAITING), authorizations, releases, links."""
    now, rnd = utcnow(), random.Random(7)
    old, future = now - timedelta(hours=3), now + timedelta(days=30)
    schools = max(1, args.students // 1000)
    await _bulk(sessions, School, [{"name": f"E{i}", "arrival_timeout_minutes": 15.0,
                                    "created_at": now} for i in range(schools)])
    students, arrivals = [], []
    for i in range(args.students):
        roll = rnd.random()
        state = "READY" if roll < 0.05 else "AWAITING" if roll < 0.10 else "AT_SCHOOL"
        students.append({"school_id": i % schools + 1, "name": f"S{i}", "state": state,
                         "version": 2 if state == "READY" else 1 if state == "AWAITING" else 0,
                         "state_since": old, "arrival_id": None})
    await _bulk(sessions, Student, students)
    for sid, row in enumerate(students, start=1):
        if row["state"] == "AWAITING":
            arrivals.append({"school_id": row["school_id"], "student_id": sid,
                             "status": "open", "created_at": old,
                             "expires_at": old + timedelta(minutes=15)})
    await _bulk(sessions, Arrival, arrivals)
    async with sessions() as session, session.begin():
        ids = (await session.exec(select(Arrival.id, Arrival.student_id))).all()
        table = Student.__table__
        await session.exec(
            table.update().where(table.c.id == bindparam("sid"))
            .values(arrival_id=bindparam("aid")),
            params=[{"sid": sid, "aid": aid} for aid, sid in ids])
    persons = []
    for i in range(args.authorizations):
        temporary = rnd.random() < 0.3
        expired = temporary and rnd.random() < 1 / 3
        persons.append({
            "student_id": i % args.students + 1, "name": f"P{i}", "document": None,
            "kind": "temporary" if temporary else "permanent",
            "status": rnd.choice(("pending", "approved", "adjustments_requested")),
            "sync_status": "none", "valid_from": None,
            "valid_until": (old if expired else future) if temporary else None,
            "version": 0, "created_at": now, "updated_at": now})
    await _bulk(sessions, AuthorizedPerson, persons)
    releases = [{"student_id": i % args.students + 1, "reason": None, "status": "approved",
                 "valid_until": old if i % 2 else future, "used_at": None, "version": 0,
                 "created_at": now} for i in range(args.students)]
    await _bulk(sessions, EarlyRelease, releases)
    guardians = args.students
    await _bulk(sessions, Guardian, [{"name": f"G{i}", "contact": None}
                                     for i in range(guardians)])
    links = [{"student_id": i % args.students + 1, "guardian_id": i + 1,
              "kind": "temporary" if i % 10 == 0 else "permanent", "valid_from": None,
              "valid_until": old if i % 10 == 0 else None, "created_at": now}
             for i in range(guardians)]
    await _bulk(sessions, GuardianLink, links)
    tokens = [{"guardian_id": i % guardians + 1, "token_hash": hash_token(str(i)),
               "expires_at": now - timedelta(hours=30) if i % 3 == 0 else future,
               "created_at": now} for i in range(args.students)]
    await _bulk(sessions, AccessToken, tokens)
    return {"students": len(students), "authorizations": len(persons),
            "early_releases": len(releases), "links": len(links), "tokens": len(tokens)}


TABLE = {Sweep.EXPIRE_AUTHORIZATIONS: "authorizations", Sweep.EXPIRE_EARLY_RELEASES:
         "early_releases", Sweep.DELETE_EXPIRED_LINKS: "links", Sweep.CLOSE_ARRIVALS: "students",
         Sweep.REVERT_READY: "students", Sweep.PRUNE_TOKENS: "tokens"}


async def naive_expire(sessions, sample: int) -> float:
    """Baseline: the one-row-at-a-time ORM loop a cron job would write; rows/s."""
    now = utcnow()
    async with sessions() as session:
        ids = (await session.exec(select(AuthorizedPerson.id).where(
            AuthorizedPerson.kind == "temporary", AuthorizedPerson.status == "pending",
            AuthorizedPerson.valid_until <= now).limit(sample))).all()
    started = time.perf_counter()
    for person_id in ids:
        async with sessions() as session, session.begin():
            person = await session.get(AuthorizedPerson, person_id)
            person.status, person.version = "expired", person.version + 1
            session.add(AuditEntry(at=now, entity="authorized_person", entity_id=person_id,
                                   action="expired", actor="naive", details={}))
    return len(ids) / max(time.perf_counter() - started, 1e-9)


async def bench_sweeps(args) -> None:
    """Populate, then run each sweep twice (work due, then nothing due)."""
    url = args.database_url or f"sqlite+aiosqlite:///{tempfile.mkdtemp()}/bench.db"
    url = normalise_database_url(url)
    await asyncio.to_thread(migrate.upgrade, url)
    engine = create_engine(url)
    sessions = session_factory(engine)
    started = time.perf_counter()
    sizes = await populate(sessions, args)
    print(f"populated {sizes} in {time.perf_counter() - started:.1f}s "
          f"({engine.url.get_backend_name()})")
    baseline = await naive_expire(sessions, args.baseline_sample)
    sweeps = PickupSweeps(sessions, PickupSettings(), NoKicks())
    print(f"\n{'sweep':<24}{'table rows':>11}{'changed':>9}{'seconds':>9}{'changed/s':>11}"
          f"{'scanned/s':>11}{'idle rerun':>12}")
    for sweep in (Sweep.EXPIRE_AUTHORIZATIONS, Sweep.EXPIRE_EARLY_RELEASES,
                  Sweep.DELETE_EXPIRED_LINKS, Sweep.CLOSE_ARRIVALS, Sweep.REVERT_READY,
                  Sweep.PRUNE_TOKENS):
        method = getattr(sweeps, sweep.replace("-", "_"))
        request = RunSweepInput(sweep=sweep, now=utcnow(), batch_size=args.batch_size)
        t0 = time.perf_counter()
        result = await method(request)
        seconds = time.perf_counter() - t0
        t1 = time.perf_counter()
        await method(request)
        idle = time.perf_counter() - t1
        rows = sizes[TABLE[sweep]]
        print(f"{sweep:<24}{rows:>11,}{result.changed:>9,}{seconds:>9.2f}"
              f"{result.changed / seconds:>11,.0f}{rows / seconds:>11,.0f}{idle * 1000:>10.0f}ms")
    print(f"\nbaseline (naive per-row ORM loop, expire-authorizations, "
          f"{args.baseline_sample} rows): {baseline:,.0f} changed/s")
    await engine.dispose()


async def bench_timers(args) -> None:
    """N timers on one worker: start rate, memory while sleeping, lateness when they fire."""
    from temporalio import activity
    from temporalio.contrib.pydantic import pydantic_data_converter
    from temporalio.testing import WorkflowEnvironment
    from temporalio.worker import Worker

    from services.dev.temporal_server import find_temporal_cli
    from services.search_attributes import dev_server_flags
    from workflows.pickup import WORKFLOWS

    lateness: list[float] = []
    done = asyncio.Event()

    @activity.defn(name=FIRE_TIMER_ACTIVITY)
    async def fire(timer: TimerInput) -> TimerResult:
        lateness.append((utcnow() - timer.deadline).total_seconds())
        if len(lateness) >= args.timers:
            done.set()
        return TimerResult(kind=timer.kind, entity_id=timer.entity_id, changed=True)

    async with await WorkflowEnvironment.start_local(
            dev_server_existing_path=find_temporal_cli(), dev_server_log_level="error",
            data_converter=pydantic_data_converter, dev_server_extra_args=[
                "--dynamic-config-value", 'history.timerProcessorMaxTimeShift="10ms"',
                *dev_server_flags()]) as env:
        queue = f"bench-{uuid.uuid4()}"
        before = rss_mb()
        async with Worker(env.client, task_queue=queue, workflows=WORKFLOWS, activities=[fire],
                          max_concurrent_activities=200, max_cached_workflows=args.cache):
            deadline = utcnow() + timedelta(seconds=args.timer_lead)
            gate = asyncio.Semaphore(100)

            async def start(i: int) -> None:
                # Dismissal bells synchronise: every timer falls due within `spread` seconds.
                due = deadline + timedelta(seconds=args.timer_spread * i / args.timers)
                async with gate:
                    await env.client.start_workflow(
                        ENTITY_TIMER_WORKFLOW,
                        TimerInput(kind=TimerKind.READY, entity_id=i, version=1, deadline=due),
                        id=f"bench-ready:{i}", task_queue=queue)

            t0 = time.perf_counter()
            await asyncio.gather(*(start(i) for i in range(args.timers)))
            started = time.perf_counter() - t0
            sleeping = rss_mb()
            if utcnow() >= deadline:
                print(f"warning: starting took {started:.0f}s, past the {args.timer_lead}s lead")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), args.timer_lead + args.timer_spread + 300)
            fired = rss_mb()
    if len(lateness) < args.timers:
        print(f"warning: only {len(lateness):,} of {args.timers:,} timers fired in time")
    ordered = sorted(lateness) or [float("nan")]
    p99 = ordered[int(0.99 * (len(ordered) - 1))]
    print(f"\ntimers: {args.timers:,} started in {started:.1f}s ({args.timers / started:,.0f}/s), "
          f"due within {args.timer_spread}s, worker cache {args.cache:,} workflows")
    print(f"worker RSS: {before:.0f} MB before, {sleeping:.0f} MB with all sleeping, "
          f"{fired:.0f} MB after firing (+{sleeping - before:.0f} MB)")
    print(f"firing lateness: p50 {statistics.median(ordered):.2f}s  p99 {p99:.2f}s  "
          f"max {ordered[-1]:.2f}s")
    print("baseline (seed: sweep every 5 min): lateness uniform in [0, 300]s, p50 150s, p99 297s")


def main() -> None:
    """Parse flags and run the chosen parts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=50_000)
    parser.add_argument("--authorizations", type=int, default=500_000)
    parser.add_argument("--timers", type=int, default=1_000)
    parser.add_argument("--timer-lead", type=float, default=None,
                        help="seconds from the first start to the first deadline "
                             "(default: enough to start them all)")
    parser.add_argument("--timer-spread", type=float, default=20.0,
                        help="deadlines fall within this many seconds (a dismissal peak)")
    parser.add_argument("--cache", type=int, default=1000,
                        help="worker max_cached_workflows (the SDK default is 1000)")
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--baseline-sample", type=int, default=2_000)
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL"))
    parser.add_argument("--skip-sweeps", action="store_true")
    parser.add_argument("--skip-timers", action="store_true")
    args = parser.parse_args()
    if args.timer_lead is None:
        args.timer_lead = 10 + args.timers / 150
    if not args.skip_sweeps:
        asyncio.run(bench_sweeps(args))
    if not args.skip_timers:
        asyncio.run(bench_timers(args))


if __name__ == "__main__":
    main()
