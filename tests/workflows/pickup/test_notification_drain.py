"""The notification drain on Temporal: a failing one backs off on its own, the others flow."""

from __future__ import annotations

from temporalio.worker import Worker

from activities.pickup.contracts.board import DrainInput, DrainResult, Outbox, drain_workflow_id
from activities.pickup.models import AuditEntry, Notification
from activities.pickup.notifications import NotificationDelivery
from shared.settings import PickupSettings
from workflows.pickup import WORKFLOWS
from workflows.pickup.drain import NOTIFICATION_BACKOFF_PATCH


class Sender:
    """Delivers everything but the keys in `failing`."""

    def __init__(self, failing: set[str]) -> None:
        self.failing = failing
        self.tried: list[str] = []

    async def send(self, notification: Notification) -> None:
        self.tried.append(notification.idempotency_key)
        if notification.idempotency_key in self.failing:
            raise ConnectionError("push provider refused this one")


async def test_the_drain_sleeps_out_each_backoff_and_ends_with_the_failure_recorded(
        temporal_env, store, task_queue):
    await store.seed.add(*[Notification(guardian_id=1, student_id=1, kind="student-ready",
                                        message="m", idempotency_key=key)
                           for key in ("bad", "good")])
    sender = Sender({"bad"})
    settings = PickupSettings(notification_max_attempts=3, notification_retry_initial_seconds=0.2,
                              notification_retry_max_seconds=0.3)
    delivery = NotificationDelivery(store.sessions, sender, settings)
    async with Worker(temporal_env.client, task_queue=task_queue, workflows=WORKFLOWS,
                      activities=[delivery.drain_notifications]):
        handle = await temporal_env.client.start_workflow(
            "pickup-drain", DrainInput(outbox=Outbox.NOTIFICATIONS, idle_seconds=0.2),
            id=f"{drain_workflow_id(Outbox.NOTIFICATIONS)}:{task_queue}", task_queue=task_queue,
            result_type=DrainResult)
        result = await handle.result()

    # The good one went out in the first round, not after the bad one's attempts.
    assert sender.tried == ["bad", "good", "bad", "bad"]
    assert (result.delivered, result.failed, result.remaining) == (1, 1, 0)
    bad, good = await store.seed.all(Notification)
    assert (bad.status, bad.attempts, good.status) == ("failed", 3, "sent")
    assert await store.seed.count(AuditEntry, AuditEntry.action == "notification-failed") == 1
    # Two backoff waits are timers in the history, under the patch.
    events = [event async for event in handle.fetch_history_events()]
    markers = [e for e in events if e.HasField("marker_recorded_event_attributes")]
    assert NOTIFICATION_BACKOFF_PATCH in str(markers[0].marker_recorded_event_attributes)
    fired = [e for e in events if e.HasField("timer_fired_event_attributes")]
    assert len(fired) >= 2
