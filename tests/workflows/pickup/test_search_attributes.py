"""Pickup timers in the Temporal UI: the READY timers of a school, a student's timers."""

from __future__ import annotations

import contextlib
from datetime import timedelta

import pytest
from temporalio.service import RPCError

from activities.pickup.board import mark_ready, signal_arrival
from activities.pickup.contracts.board import TimerKind, timer_workflow_id
from activities.pickup.kick import Kicker
from shared.contracts.search_attributes import SCHOOL_ID, STUDENT_ID, SUMMARY
from shared.db.models import utcnow
from tests.support.visibility import cli_listed, listed

SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"])


@SQLITE_ONLY
async def test_ready_timers_of_a_school_are_found(temporal_env, store):
    client = temporal_env.client
    school = await store.seed.school()
    student = await store.seed.student(school)
    at = utcnow()
    async with store.sessions() as session, session.begin():
        arrival = await signal_arrival(session, student_id=student.id, guardian_id=None, at=at,
                                       actor="test")
        ready = await mark_ready(session, student_id=student.id, version=arrival.student.version,
                                 at=at, actor="test", ready_timeout=timedelta(minutes=60))
    timers = [*arrival.timers, *ready.timers]

    async def temporal():
        return client

    # The real starter; no worker polls pickup-v1 here, so the timers just stay Running.
    await Kicker(store.settings.pickup, temporal).timers(timers)
    ids = {t.kind: timer_workflow_id(t.kind, t.entity_id, t.version) for t in timers}
    try:
        ready_query = (f"WorkflowId STARTS_WITH 'pickup-ready:' AND SchoolId='{school.id}' "
                       "AND ExecutionStatus='Running'")
        found = await listed(client, ready_query, {ids[TimerKind.READY]})
        assert ids[TimerKind.ARRIVAL] not in found
        await cli_listed(client, ready_query, {ids[TimerKind.READY]})
        await listed(client, f"StudentId='{student.id}'", set(ids.values()))

        described = await client.get_workflow_handle(ids[TimerKind.READY]).describe()
        attributes = described.typed_search_attributes
        assert (attributes.get(SCHOOL_ID), attributes.get(STUDENT_ID)) == (
            str(school.id), str(student.id))
        assert (await described.memo_value(SUMMARY)).startswith(
            f"READY timer of student {student.id} at school {school.id}, due ")
    finally:
        for workflow_id in ids.values():
            with contextlib.suppress(RPCError):
                await client.get_workflow_handle(workflow_id).terminate("test over")
