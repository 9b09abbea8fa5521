"""The guardian notification outbox: sent once each, a failing sender leaves them pending."""

from __future__ import annotations

import pytest
from temporalio.exceptions import ApplicationError

from activities.pickup.notifications import NotificationDelivery
from shared.contracts.pickup import DrainBatchInput, Outbox
from shared.db.pickup_models import Notification


class Sender:
    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.sent: list[str] = []

    async def send(self, notification: Notification) -> None:
        if self.fail:
            raise ConnectionError("push provider down")
        self.sent.append(notification.idempotency_key)


async def test_outbox_sends_each_notification_once_and_keeps_failures_pending(store):
    await store.seed.add(*[Notification(guardian_id=1, student_id=1, kind="pickup-reverted",
                                        message="m", idempotency_key=f"k{i}") for i in range(3)])
    down = NotificationDelivery(store.sessions, Sender(fail=True))
    with pytest.raises(ApplicationError):
        await down.drain_notifications(DrainBatchInput(outbox=Outbox.NOTIFICATIONS))
    first = (await store.seed.all(Notification))[0]
    assert (first.status, first.attempts, "down" in first.last_error) == ("pending", 1, True)

    sender = Sender()
    up = NotificationDelivery(store.sessions, sender)
    result = await up.drain_notifications(DrainBatchInput(outbox=Outbox.NOTIFICATIONS))
    again = await up.drain_notifications(DrainBatchInput(outbox=Outbox.NOTIFICATIONS))

    assert (result.delivered, result.remaining, again.delivered) == (3, 0, 0)
    assert sender.sent == ["k0", "k1", "k2"]
    assert {n.status for n in await store.seed.all(Notification)} == {"sent"}
