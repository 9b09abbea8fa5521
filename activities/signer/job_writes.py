"""The writes every job makes, as Core statements built once: no unit of work on the hot path.

The ORM session costs more CPU than the statements it sends: a flush per commit, an identity
map, and a cache key built anew for each statement. Each job is claimed, noted and moved on
three or four times, so these writes run as prepared Core statements, every transaction in
one greenlet (on a SQLite file, in one trip to its writer's thread: `shared/db/sqlite_writer`).
Each still writes its `job_history` row in the same transaction as the job.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, Connection, Update, bindparam, exists, insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from activities.signer.models.jobs import Job, JobHistory
from shared.db.models import OperationalEvent, PipelineState, utcnow
from shared.db.sqlite_writer import writer_for

JOBS = Job.__table__
HISTORY = JobHistory.__table__
EVENTS = OperationalEvent.__table__
_INSERT_JOB = insert(JOBS)
_INSERT_HISTORY = insert(HISTORY)
_INSERT_EVENT = insert(EVENTS)
_STATUS_OF = select(JOBS.c.status).where(JOBS.c.id == bindparam("p_id"))
_MARK_STARTED = (update(JOBS).where(JOBS.c.id.in_(bindparam("p_ids", expanding=True)))
                 .values(workflow_started_at=bindparam("p_now")))

T = TypeVar("T")


def not_paused(dialect: str) -> ColumnElement[bool]:
    """The claim's pause condition, evaluated inside the claim's own UPDATE."""
    if dialect == "postgresql":
        # The pause row is read under a share lock in the same statement (no extra round
        # trip): a pause that commits while this claim is open waits for it, and a claim that
        # waited on a pause reads the committed row. Once the pause is answered, every claim
        # either committed before it or sees it.
        paused = (select(PipelineState.paused).where(PipelineState.id == 1)
                  .with_for_update(read=True).scalar_subquery())
        return paused.is_not(True)
    return ~exists().where(PipelineState.paused)


def history_row(job_id: str, message: str, *, at: datetime, from_status: str | None = None,
                to_status: str | None = None, code: str | None = None) -> dict[str, Any]:
    """The parameters of one `job_history` insert."""
    return {"job_id": job_id, "at": at, "from_status": from_status, "to_status": to_status,
            "code": code, "message": message}


def row_of(model: Job | OperationalEvent) -> dict[str, Any]:
    """A model's column values, without an id the store assigns."""
    return {column.name: getattr(model, column.name) for column in model.__table__.columns
            if not (column.name == "id" and model.id is None)}


class JobWrites:
    """Runs one transaction of Core statements on `engine`; keeps the statements it built."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self._dialect = engine.dialect.name
        # Keyed by shape; the shapes are the callers' own keyword sets, a handful in all.
        self._updates: dict[tuple, Update] = {}

    async def run(self, work: Callable[[Connection], T]) -> T:
        """`work` in one transaction (committed unless it raises): on a SQLite file, whole on
        its writer's thread; elsewhere in one greenlet."""
        if (writer := writer_for(self.engine)) is not None:
            return await writer.run(work)
        async with self.engine.connect() as connection:
            return await connection.run_sync(_in_transaction, work)

    def update_job(self, fields: Iterable[str], *, expected: Iterable[str] | None = None,
                   to: str | None = None, unpaused: bool = False) -> Update:
        """`UPDATE jobs` of `fields` (bound as `p_<field>`), `updated_at` (`p_now`), by `p_id`.

        With `expected`, only from those statuses, to `to`, bumping `version`; with
        `unpaused`, only while the pipeline isn't paused.
        """
        key = (tuple(sorted(fields)), None if expected is None else tuple(expected), to,
               unpaused)
        statement = self._updates.get(key)
        if statement is None:
            statement = self._updates[key] = self._build_update(*key)
        return statement

    def _build_update(self, fields: tuple[str, ...], expected: tuple[str, ...] | None,
                      to: str | None, unpaused: bool) -> Update:
        where = [JOBS.c.id == bindparam("p_id")]
        values: dict[str, Any] = {"updated_at": bindparam("p_now"),
                                  **{name: bindparam(f"p_{name}") for name in fields}}
        if expected is not None:
            # `=` for the usual single state: an IN list is expanded anew at each execution.
            where.append(JOBS.c.status == expected[0] if len(expected) == 1
                         else JOBS.c.status.in_(expected))
            values |= {"status": to, "version": JOBS.c.version + 1}
        if unpaused:
            where.append(not_paused(self._dialect))
        return update(JOBS).where(*where).values(**values)


def update_params(job_id: str, now: datetime, fields: Mapping[str, object]) -> dict[str, Any]:
    """The parameters of a statement from `JobWrites.update_job`."""
    return {"p_id": job_id, "p_now": now, **{f"p_{name}": value for name, value in fields.items()}}


def insert_history(connection: Connection, *rows: dict[str, Any]) -> None:
    """`job_history` rows, inserted in the order given."""
    for row in rows:
        connection.execute(_INSERT_HISTORY, row)


def insert_event(connection: Connection, event: OperationalEvent | None) -> None:
    """An operational event, if there is one."""
    if event is not None:
        connection.execute(_INSERT_EVENT, row_of(event))


def insert_job(connection: Connection, job: Job) -> None:
    """A new `jobs` row."""
    connection.execute(_INSERT_JOB, row_of(job))


def status_of(connection: Connection, job_id: str) -> str | None:
    """A job's status as this transaction sees it."""
    return connection.execute(_STATUS_OF, {"p_id": job_id}).scalar()


def mark_started(connection: Connection, job_ids: Iterable[str]) -> None:
    """`workflow_started_at` for these jobs, in one statement."""
    connection.execute(_MARK_STARTED, {"p_ids": list(job_ids), "p_now": utcnow()})


def _in_transaction(connection: Connection, work: Callable[[Connection], T]) -> T:
    with connection.begin():
        return work(connection)
