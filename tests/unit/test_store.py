"""The operational store on both backends: migrations, pause row, events trail."""

from __future__ import annotations

import asyncio

from sqlalchemy import inspect, text
from sqlmodel import select

from activities.signer.models.pipeline import read_pipeline_state
from shared.db import migrate
from shared.db.engine import create_engine, is_sqlite, session_factory
from shared.db.models import OperationalEvent, PipelineState
from shared.events import record_event


async def test_migrations_reach_head_and_are_idempotent(database_url):
    await asyncio.to_thread(migrate.upgrade, database_url)
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            revisions = await connection.run_sync(migrate.current_revisions)
            tables = await connection.run_sync(lambda c: set(inspect(c).get_table_names()))
    finally:
        await engine.dispose()
    assert revisions == migrate.head_revisions()
    assert {"pipeline_state", "operational_events", "instances"} <= tables


async def test_sqlite_runs_in_wal_mode(database_url):
    if not is_sqlite(database_url):
        return
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            mode = (await connection.execute(text("PRAGMA journal_mode"))).scalar()
    finally:
        await engine.dispose()
    assert mode == "wal"


async def test_pipeline_defaults_to_running_until_a_row_says_otherwise(database_url):
    engine = create_engine(database_url)
    sessions = session_factory(engine)
    try:
        async with sessions() as session:
            assert (await read_pipeline_state(session)).paused is False
            await session.merge(PipelineState(paused=True, reason="maintenance", changed_by="op"))
            await session.commit()
        async with sessions() as session:
            state = await read_pipeline_state(session)
    finally:
        await engine.dispose()
    assert state.paused and state.reason == "maintenance"


async def test_events_are_written_with_the_change_they_explain(database_url):
    engine = create_engine(database_url)
    sessions = session_factory(engine)
    try:
        async with sessions() as session:
            await record_event(session, domain="signer", type="PipelinePaused",
                               message="Pipeline paused by operator. Reason: test.",
                               actor="api-key", reason="test")
            await session.rollback()
        async with sessions() as session:
            await record_event(session, domain="signer", type="PipelineResumed",
                               message="Pipeline resumed by operator.", actor="api-key")
            await session.commit()
        async with sessions() as session:
            events = (await session.exec(select(OperationalEvent))).all()
    finally:
        await engine.dispose()
    assert [e.type for e in events] == ["PipelineResumed"]
    assert events[0].at.year >= 2026


async def test_the_pause_row_exists_from_the_first_migration_so_a_claim_can_lock_it(database_url):
    engine = create_engine(database_url)
    try:
        async with session_factory(engine)() as session:
            row = await session.get(PipelineState, 1)
    finally:
        await engine.dispose()
    assert row is not None and (row.paused, row.version) == (False, 0)
