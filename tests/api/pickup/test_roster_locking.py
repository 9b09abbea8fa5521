"""A big roster import never stops the other writers.

A dry run reads only (it completes while another connection holds the write lock the whole
time); a real import writes in short batches, so signer uploads, school creation, the pickup
timers and the workers' heartbeats keep committing beside it (and `/api/ready` stays 200), on
SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
import uuid
from datetime import timedelta

import httpx
from sqlalchemy import text
from sqlalchemy.engine import make_url

from activities.pickup.contracts.board import TimerInput, TimerKind
from activities.pickup.models import AuditEntry, Guardian, GuardianLink, Student
from activities.signer.crypto.samples import make_pdf
from activities.signer.models.jobs import InputFolderState
from services.app import create_app
from shared import instances
from shared.db.engine import create_engine, is_sqlite
from shared.db.models import Instance, as_utc, utcnow
from tests.api.conftest import make_context
from tests.support.pickup import API_KEY, RecordingKicker, Seed

CSV = {"Content-Type": "text/csv"}
# Far under SQLite's 10 s busy timeout, far over a batch: a writer that had to wait for the
# whole import (tens of seconds of one transaction before) would blow it.
GENEROUS = 5.0


def cpf(n: int) -> str:
    """A valid CPF from a 9-digit number (its two check digits computed)."""
    digits = [int(c) for c in f"{n:09d}"]
    for size in (9, 10):
        total = sum(d * w for d, w in zip(digits, range(size + 1, 1, -1), strict=False))
        digits.append(total * 10 % 11 % 10)
    return "".join(map(str, digits))


def roster(lines: int) -> bytes:
    rows = ["student_registration,student_name,guardian_cpf,guardian_name"]
    rows += [f"R{i},Aluno {i},{cpf(100_000_000 + i)},Responsável {i}" for i in range(lines)]
    return ("\n".join(rows) + "\n").encode()


class WriteLockHeld:
    """Another connection holding the store's write lock (SQLite) or write-blocking table
    locks (PostgreSQL) for the block: only a reader can get anything done meanwhile."""

    TABLES = "pickup_students, pickup_guardians, pickup_guardian_links, pickup_audit, " \
             "pickup_events"

    def __init__(self, url: str) -> None:
        self.url = url

    async def __aenter__(self) -> WriteLockHeld:
        if is_sqlite(self.url):
            self.raw = sqlite3.connect(make_url(self.url).database, isolation_level=None)
            self.raw.execute("BEGIN IMMEDIATE")
        else:
            self.engine = create_engine(self.url)
            self.conn = await self.engine.connect()
            await self.conn.begin()
            # EXCLUSIVE blocks INSERT / UPDATE / DELETE, lets SELECT through.
            await self.conn.execute(text(f"LOCK TABLE {self.TABLES} IN EXCLUSIVE MODE"))
        return self

    async def __aexit__(self, *exc) -> None:
        if is_sqlite(self.url):
            self.raw.execute("ROLLBACK")
            self.raw.close()
        else:
            await self.conn.rollback()
            await self.conn.close()
            await self.engine.dispose()


async def test_a_dry_run_of_20000_lines_writes_nothing_and_takes_no_write_lock(
        pickup_api, database_url):
    api = pickup_api
    school = await api.ok("POST", "/api/pickup/schools", json={"name": "Escola"})
    body = roster(20_000)
    assert len(body) < 5 * 1024 * 1024
    async with WriteLockHeld(database_url), asyncio.timeout(60):
        # A write here would wait for the lock this block holds: busy timeout on SQLite
        # (500), the test's timeout on PostgreSQL.
        answer = await api.http.post(f"/api/pickup/schools/{school['id']}/roster?dry_run=true",
                                     content=body, headers=CSV)
    assert answer.status_code == 200, answer.text
    report = answer.json()
    assert (report["dryRun"], report["written"], report["refused"]) == (True, False, 0)
    assert report["summary"] == {"student": {"created": 20_000},
                                 "guardian": {"created": 20_000},
                                 "link": {"created": 20_000}}
    for model in (Student, Guardian, GuardianLink):
        assert await api.seed.count(model) == 0
    # The only audit row is the school's own creation, from before the dry run.
    assert [(a.entity, a.action) for a in await api.seed.all(AuditEntry)] == [
        ("school", "created")]


@contextlib.asynccontextmanager
async def _watcher_passes(sessions):
    """A watcher's pass over the inbox every 0.2 s, as its heartbeat (a writer too)."""

    async def passes() -> None:
        while True:
            async with sessions() as session:
                await session.merge(InputFolderState(name="inbox", status="Running",
                                                     last_scan_at=utcnow()))
                await session.commit()
            await asyncio.sleep(0.2)

    task = asyncio.create_task(passes())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_an_import_beside_an_upload_a_timer_and_heartbeats_keeps_the_system_ready(
        settings, temporal_env, monkeypatch):
    from activities.pickup.sweeps import PickupSweeps

    # A worker's heartbeat every 0.2 s, counted stale after 2 s: an import holding the write
    # lock for longer would stop the heartbeat and turn /api/ready 503.
    monkeypatch.setattr(instances, "HEARTBEAT_SECONDS", 0.2)
    settings.pipeline.task_queue_suffix = f"-roster-{uuid.uuid4().hex[:8]}"
    context = await make_context(settings, temporal_env)
    settings.readiness.processes = ["watcher"]
    settings.readiness.poller_stale_seconds = 2.0
    seed = Seed(context.sessions)
    other = await seed.school()
    past = utcnow() - timedelta(hours=2)
    ready = [await seed.ready_student(other, at=past) for _ in range(40)]
    sweeps = PickupSweeps(context.sessions, settings.pickup, RecordingKicker())
    transport = httpx.ASGITransport(app=create_app(context))
    lines = 3000
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://esteira",
                                     headers={"X-API-Key": API_KEY}) as http, \
                instances.registered_instance(context.sessions, "watcher"), \
                _watcher_passes(context.sessions):
            await asyncio.sleep(0.3)
            assert (await http.get("/api/ready")).status_code == 200
            school = (await http.post("/api/pickup/schools", json={"name": "Escola"})).json()
            importing = asyncio.create_task(http.post(
                f"/api/pickup/schools/{school['id']}/roster", content=roster(lines),
                headers=CSV))
            waits, readiness, during = [], [], 0

            async def watch_readiness() -> None:
                # Apart from the writers: a reader is never held up by the import.
                while not importing.done():
                    answer = await http.get("/api/ready")
                    readiness.append((answer.status_code, answer.json()["status"]))
                    await asyncio.sleep(0.1)

            watching = asyncio.create_task(watch_readiness())
            async with asyncio.timeout(300):
                for n, student in enumerate(ready):
                    started = time.monotonic()
                    fired = await sweeps.fire_timer(TimerInput(
                        kind=TimerKind.READY, entity_id=student.id, version=student.version,
                        deadline=past + timedelta(minutes=60), school_id=other.id,
                        student_id=student.id))
                    uploaded = await http.post("/api/files", files={
                        "file": (f"contrato-{n}.pdf", make_pdf(5_000, pages=1))})
                    created = await http.post("/api/pickup/schools", json={"name": "Nova"})
                    waits.append(time.monotonic() - started)
                    assert fired.changed, n
                    assert uploaded.status_code == 201, uploaded.text
                    assert created.status_code == 201, created.text
                    during += not importing.done()
                    if importing.done():
                        break
                    await asyncio.sleep(0.05)
                answer = await importing
                await watching
            async with context.sessions() as session:
                beat = await session.get(Instance, instances.instance_id("watcher"))
    finally:
        await context.engine.dispose()

    assert answer.status_code == 200, answer.text
    assert answer.json()["summary"]["link"] == {"created": lines}
    # The other writers did commit while the import was under way, none kept waiting, and
    # the heartbeat kept the system ready throughout.
    assert during >= 3, f"the import ended before the other writers ran ({during})"
    assert max(waits) < GENEROUS, waits
    assert set(readiness) == {(200, "Ready")}, readiness
    assert utcnow() - as_utc(beat.last_seen_at) < timedelta(seconds=2)


async def test_the_dry_run_reports_what_the_batched_import_then_does(pickup_api):
    api = pickup_api
    api.context.settings.pickup.roster_batch_lines = 2  # lines of one student span batches
    school = await api.ok("POST", "/api/pickup/schools", json={"name": "Escola"})
    url = f"/api/pickup/schools/{school['id']}/roster"
    first = ("student_registration,student_name,guardian_cpf,guardian_name,link_kind,"
             "valid_until,student_card_value\n"
             f"A1,Ana,{cpf(123_456_781)},Maria,,,\n"
             f"B2,Bruno,{cpf(234_567_892)},João,,,\n")
    await api.ok("POST", url, content=first.encode(), headers=CSV)
    second = ("student_registration,student_name,guardian_cpf,guardian_name,link_kind,"
              "valid_until,student_card_value\n"
              f"A1,Ana Maria,{cpf(123_456_781)},,,,11\n"  # renamed, gets a card
              f"C3,Carla,{cpf(123_456_781)},,temporary,2031-01-01T00:00:00+00:00,\n"
              f"C3,,{cpf(345_678_903)},Pedro,,,12\n"  # C3 created two lines up
              f"B2,,{cpf(234_567_892)},João Paulo,temporary,2031-01-01T00:00:00+00:00,\n"
              f"A1,,{cpf(234_567_892)},,,,\n")
    dry = await api.ok("POST", url + "?dry_run=true", content=second.encode(), headers=CSV)
    real = await api.ok("POST", url, content=second.encode(), headers=CSV)

    def outcomes(report):
        return [{k: v for k, v in line.items() if not k.endswith("Id")}
                for line in report["lines"]]

    assert outcomes(dry) == outcomes(real)
    assert [line.get("student") for line in outcomes(real)] == [
        "updated", "created", "unchanged", "unchanged", "unchanged"]
    assert [line.get("link") for line in outcomes(real)] == [
        "unchanged", "created", "created", "updated", "created"]
    assert real["summary"]["guardian"] == {"unchanged": 3, "created": 1, "updated": 1}
    again = await api.ok("POST", url, content=second.encode(), headers=CSV)
    assert again["summary"]["link"] == {"unchanged": 5}
