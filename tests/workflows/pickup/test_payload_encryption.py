"""Pickup through an encrypting client: no student's or guardian's name in Temporal's history."""

from __future__ import annotations

from datetime import timedelta

import pytest
from temporalio.worker import Worker

from activities.pickup.board import mark_ready, signal_arrival
from activities.pickup.contracts.board import (
    DrainInput,
    DrainResult,
    Outbox,
    RunSweepInput,
    Sweep,
    SweepResult,
    TimerResult,
)
from activities.pickup.contracts.names import DRAIN_WORKFLOW, ENTITY_TIMER_WORKFLOW, SWEEP_WORKFLOW
from activities.pickup.models import Notification, Student
from activities.pickup.notifications import NotificationDelivery
from shared.db.models import utcnow
from tests.support.encryption import assert_sealed, encrypting_client, raw_history
from workflows.pickup import WORKFLOWS

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])
# Distinctive names (one with non-ASCII letters), so a chance match in ciphertext is out of
# the question.
STUDENT = "Heloísa Quintanilha Brandão"
GUARDIAN = "Wenceslau Arantes Pimpão"


class Outbound:
    """The guardians' channel: where the names are meant to go."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    async def send(self, notification: Notification) -> None:
        self.sent.append(notification.message)


async def test_a_pickup_cycle_leaves_no_name_in_clear_in_temporal(temporal_env, store,
                                                                 task_queue):
    client = encrypting_client(temporal_env.client, store.settings)
    school = await store.seed.school()
    student = await store.seed.student(school, name=STUDENT)
    guardian = await store.seed.guardian(GUARDIAN)
    await store.seed.link(student, guardian)
    async with store.sessions() as session, session.begin():
        arriving = await signal_arrival(session, student_id=student.id, guardian_id=guardian.id,
                                        at=utcnow(), actor="guardian")
        ready = await mark_ready(session, student_id=student.id,
                                 version=arriving.student.version, at=utcnow(), actor="desk",
                                 ready_timeout=timedelta(seconds=1))
    [timer] = ready.timers
    outbound = Outbound()
    delivery = NotificationDelivery(store.sessions, outbound, store.settings.pickup)
    ids = {name: f"{name}:{task_queue}" for name in ("timer", "drain", "sweep")}
    async with Worker(client, task_queue=task_queue, workflows=WORKFLOWS,
                      activities=[*store.sweeps.all(), delivery.drain_notifications]):
        fired = await client.execute_workflow(
            ENTITY_TIMER_WORKFLOW, timer, id=ids["timer"], task_queue=task_queue,
            result_type=TimerResult)
        drained = await client.execute_workflow(
            DRAIN_WORKFLOW, DrainInput(outbox=Outbox.NOTIFICATIONS, idle_seconds=0.2),
            id=ids["drain"], task_queue=task_queue, result_type=DrainResult)
        await client.execute_workflow(
            SWEEP_WORKFLOW, RunSweepInput(sweep=Sweep.CLOSE_ARRIVALS), id=ids["sweep"],
            task_queue=task_queue, result_type=SweepResult)
    # The workers read their own payloads: the READY episode timed out, the guardian was told.
    assert fired.changed
    assert (await store.seed.get(Student, student.id)).state == "AT_SCHOOL"
    assert drained.delivered >= 1 and any(STUDENT.split()[0] in m for m in outbound.sent)
    for what, workflow_id in ids.items():
        assert_sealed(await raw_history(client, workflow_id), (STUDENT, GUARDIAN), what)
