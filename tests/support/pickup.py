"""Pickup test helpers: short-duration settings, a recording kicker, rows to start from."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import func, select
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio.client import Client

from activities.pickup.board import mark_ready, signal_arrival
from activities.pickup.contracts.board import TimerInput
from activities.pickup.models import (
    AuthorizedPerson,
    BoardEvent,
    Credential,
    Guardian,
    GuardianLink,
    LedgerEntry,
    Notification,
    School,
    Student,
)
from activities.pickup.operator import PickupOperations
from shared.db.engine import create_engine, session_factory
from shared.db.models import utcnow
from shared.settings import PickupSettings, Settings
from shared.temporal import TemporalHandle

API_KEY = "test-api-key-0123456789"
MONITOR_TOKEN = "monitor-token-0123456789"


def badge_of(student_id: int) -> int:
    """The card value `Seed.student` gives a student."""
    return 7_000_000 + student_id


def pickup_settings(tmp_path, database_url: str, **pickup: Any) -> Settings:
    """Settings on the test database with short pickup durations and no schedules."""
    values: dict[str, Any] = {"schedules_enabled": False, "sse_poll_seconds": 0.05,
                              "monitor_token": MONITOR_TOKEN, "ledger_retry_initial_seconds": 0.2,
                              "ledger_retry_max_seconds": 0.5}
    values.update(pickup)
    return Settings(data_dir=tmp_path / "data", database_url=database_url, api_key=API_KEY,
                    pickup=PickupSettings(**values))


@dataclass
class RecordingKicker:
    """Stands in for `Kicker`: remembers what would have been started."""

    controllers: list[int] = field(default_factory=list)
    notifications: int = 0
    timers: list[TimerInput] = field(default_factory=list)

    async def drains(self, controllers=(), notifications: bool = False) -> None:
        self.controllers += sorted(set(controllers))
        self.notifications += bool(notifications)

    async def after(self, *, controllers=(), notifications: int = 0, timers=()) -> None:
        self.timers += list(timers)
        await self.drains(controllers, notifications > 0)


def recording_face(settings: Settings, sessions: async_sessionmaker[AsyncSession],
                   kicker: RecordingKicker) -> PickupOperations:
    """The pickup face on `sessions` with `kicker` in place of Temporal (nothing connects)."""

    async def no_temporal() -> Client:
        raise AssertionError("a recording face never reaches Temporal")

    return PickupOperations(settings, sessions, TemporalHandle(no_temporal),
                            kicker=kicker)  # type: ignore[arg-type]


class Seed:
    """Rows a test starts from, written in their own transactions."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.sessions = sessions

    async def add(self, *rows: Any) -> Any:
        async with self.sessions() as session, session.begin():
            session.add_all(rows)
        return rows[0] if len(rows) == 1 else rows

    async def school(self, arrival_minutes: float = 15.0, url: str | None = None) -> School:
        return await self.add(School(name="Escola", arrival_timeout_minutes=arrival_minutes,
                                     turnstile_url=url))

    async def student(self, school: School, name: str = "Ana", *,
                      badge: bool = True) -> Student:
        """A student AT_SCHOOL with its own card (`badge_of`), as READY grants need."""
        student = await self.add(Student(school_id=school.id, name=name))
        return await self.badge(student) if badge else student

    async def badge(self, student: Student) -> Student:
        """Give the student its own card, `badge_of(student.id)`."""
        now = utcnow()
        await self.add(Credential(school_id=student.school_id, holder_kind="student",
                                  holder_id=student.id, card_value=badge_of(student.id),
                                  created_at=now, updated_at=now))
        return student

    async def guardian(self, name: str = "Maria") -> Guardian:
        return await self.add(Guardian(name=name))

    async def link(self, student: Student, guardian: Guardian, *, until: datetime | None = None,
                   since: datetime | None = None, kind: str | None = None) -> GuardianLink:
        kind = kind or ("temporary" if until else "permanent")
        return await self.add(GuardianLink(student_id=student.id, guardian_id=guardian.id,
                                           kind=kind, valid_from=since, valid_until=until))

    async def person(self, student: Student, *, status: str = "pending",
                     until: datetime | None = None, kind: str | None = None) -> AuthorizedPerson:
        kind = kind or ("temporary" if until else "permanent")
        return await self.add(AuthorizedPerson(student_id=student.id, name="Tia", kind=kind,
                                               status=status, valid_until=until))

    async def ready_student(self, school: Student, *, at: datetime | None = None,
                            timeout: timedelta = timedelta(minutes=60)) -> Student:
        """A student taken AT_SCHOOL -> AWAITING -> READY at `at`."""
        student = await self.student(school)
        at = at or utcnow()
        async with self.sessions() as session, session.begin():
            waiting = await signal_arrival(session, student_id=student.id, guardian_id=None,
                                           at=at, actor="test")
            ready = await mark_ready(session, student_id=student.id,
                                     version=waiting.student.version, at=at, actor="test",
                                     ready_timeout=timeout)
        return ready.student

    async def get(self, model: type, ident: int) -> Any:
        async with self.sessions() as session:
            return await session.get(model, ident)

    async def all(self, model: type, *where: Any) -> list[Any]:
        async with self.sessions() as session:
            return list((await session.exec(select(model).where(*where)
                                            .order_by(model.id))).all())

    async def count(self, model: type, *where: Any) -> int:
        async with self.sessions() as session:
            return (await session.exec(select(func.count()).select_from(model)
                                       .where(*where))).one()

    async def effects(self, student_id: int) -> dict[str, int]:
        """Side effects recorded for a student: revocations, notifications, broadcasts."""
        return {
            "revokes": await self.count(LedgerEntry, LedgerEntry.subject_id == student_id,
                                        LedgerEntry.subject_kind == "student",
                                        LedgerEntry.command == "revoke"),
            "notifications": await self.count(Notification,
                                              Notification.student_id == student_id),
            "broadcasts": await self.count(BoardEvent, BoardEvent.student_id == student_id),
        }


@dataclass
class PickupStore:
    """What a pickup test works with: settings, rows, a recording kicker, the sweeps, and the
    pickup face around that kicker."""

    settings: Settings
    seed: Seed
    kicker: RecordingKicker
    sweeps: Any
    pickup: Any

    @property
    def sessions(self) -> async_sessionmaker[AsyncSession]:
        return self.seed.sessions


@asynccontextmanager
async def open_store(tmp_path, database_url: str, **pickup: Any) -> AsyncIterator[PickupStore]:
    """A PickupStore on `database_url`, its engine disposed at the end."""
    from activities.pickup.sweeps import PickupSweeps

    settings = pickup_settings(tmp_path, database_url, **pickup)
    engine = create_engine(settings.sqlalchemy_url)
    sessions = session_factory(engine)
    kicker = RecordingKicker()
    try:
        yield PickupStore(settings, Seed(sessions), kicker,
                          PickupSweeps(sessions, settings.pickup, kicker),
                          recording_face(settings, sessions, kicker))
    finally:
        await engine.dispose()


TURNSTILE_URL = "http://turnstile.test"


def simulated_turnstile(**settings: Any):
    """(app, TurnstileClients speaking to it in process, raw httpx client of the app)."""
    import httpx

    from activities.pickup.turnstile_client import TurnstileClients
    from services.simulators.turnstile import TurnstileSimSettings, create_app

    app = create_app(TurnstileSimSettings(**settings))
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=TURNSTILE_URL)
    return app, TurnstileClients(http, login="admin", password="admin", timeout=5), http


@asynccontextmanager
async def serve(app: Any) -> AsyncIterator[str]:
    """Run an ASGI app under uvicorn on a free port for the block; yields its base URL."""
    import asyncio

    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                                           timeout_graceful_shutdown=1, lifespan="off"))
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        await task
