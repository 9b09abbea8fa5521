"""The guardian notification outbox: each one sent once, each failure backed off on its own."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from activities.pickup import metrics
from activities.pickup.contracts.board import DrainBatchInput, Outbox
from activities.pickup.models import AuditEntry, Notification
from activities.pickup.notifications import NotificationDelivery
from shared.db.models import as_utc
from shared.settings import PickupSettings

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
DRAIN = DrainBatchInput(outbox=Outbox.NOTIFICATIONS)


class Sender:
    def __init__(self, fail: bool = False, failing: frozenset[str] = frozenset()) -> None:
        self.fail = fail
        self.failing = failing
        self.tried: list[str] = []
        self.sent: list[str] = []

    async def send(self, notification: Notification) -> None:
        self.tried.append(notification.idempotency_key)
        if self.fail or notification.idempotency_key in self.failing:
            raise ConnectionError("push provider down")
        self.sent.append(notification.idempotency_key)


class Clock:
    """Time the test moves by hand."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


def _note(key: str, kind: str = "pickup-reverted") -> Notification:
    return Notification(guardian_id=1, student_id=1, kind=kind, message="m", idempotency_key=key,
                        created_at=T0)


def _settings(**values) -> PickupSettings:
    return PickupSettings(**{"notification_max_attempts": 3,
                             "notification_retry_initial_seconds": 10.0,
                             "notification_retry_max_seconds": 15.0, **values})


async def test_outbox_sends_each_notification_once_and_a_down_provider_never_raises(store):
    await store.seed.add(*[_note(f"k{i}") for i in range(3)])
    clock = Clock()
    down = NotificationDelivery(store.sessions, Sender(fail=True), _settings(), clock)
    result = await down.drain_notifications(DRAIN)
    assert (result.delivered, result.failed, result.remaining) == (0, 0, 0)
    assert result.retry_in_seconds == 10.0
    first = (await store.seed.all(Notification))[0]
    assert (first.status, first.attempts, "down" in first.last_error) == ("pending", 1, True)
    assert as_utc(first.next_attempt_at) == T0 + timedelta(seconds=10)

    clock.now += timedelta(seconds=10)
    sender = Sender()
    up = NotificationDelivery(store.sessions, sender, _settings(), clock)
    result = await up.drain_notifications(DRAIN)
    again = await up.drain_notifications(DRAIN)

    assert (result.delivered, result.remaining, again.delivered) == (3, 0, 0)
    assert (result.retry_in_seconds, again.retry_in_seconds) == (None, None)
    assert sender.sent == ["k0", "k1", "k2"]
    assert {n.status for n in await store.seed.all(Notification)} == {"sent"}


async def test_a_notification_that_always_fails_does_not_block_the_next(store):
    await store.seed.add(_note("bad"), _note("good"))
    sender = Sender(failing=frozenset({"bad"}))
    delivery = NotificationDelivery(store.sessions, sender, _settings(), Clock())

    result = await delivery.drain_notifications(DRAIN)

    assert (result.delivered, result.failed) == (1, 0)
    assert sender.sent == ["good"]
    bad, good = await store.seed.all(Notification)
    assert (bad.status, bad.attempts, good.status) == ("pending", 1, "sent")


async def test_backoff_between_attempts_then_failed_after_the_maximum(store):
    school = await store.seed.school()
    student = await store.seed.student(school, badge=False)
    note = _note("bad", kind="student-ready")
    note.student_id = student.id
    await store.seed.add(note)
    failed_before = metrics.NOTIFICATION_ATTEMPTS.labels("student-ready", "failed")._value.get()
    clock = Clock()
    sender = Sender(fail=True)
    delivery = NotificationDelivery(store.sessions, sender, _settings(), clock)

    async def at(seconds: float) -> float | None:
        clock.now = T0 + timedelta(seconds=seconds)
        return (await delivery.drain_notifications(DRAIN)).retry_in_seconds

    assert await at(0) == 10.0  # attempt 1, then 10 s
    assert await at(9) == 1.0  # not due: untouched
    assert len(sender.tried) == 1
    assert await at(10) == 15.0  # attempt 2; 20 s capped at 15 s
    assert await at(24) == 1.0
    assert len(sender.tried) == 2
    clock.now = T0 + timedelta(seconds=25)
    result = await delivery.drain_notifications(DRAIN)  # attempt 3 = the maximum

    assert (result.failed, result.retry_in_seconds) == (1, None)
    [note] = await store.seed.all(Notification)
    assert (note.status, note.attempts, note.next_attempt_at) == ("failed", 3, None)
    assert as_utc(note.last_attempt_at) == T0 + timedelta(seconds=25)
    clock.now += timedelta(hours=1)
    assert (await delivery.drain_notifications(DRAIN)).failed == 0
    assert len(sender.tried) == 3  # a failed one is never tried again by itself
    [audit] = await store.seed.all(AuditEntry, AuditEntry.entity == "notification")
    assert (audit.action, audit.to_state, audit.details["attempts"]) == (
        "notification-failed", "failed", 3)
    # The student's school, so the school's day (its audit, its dismissal report) has it.
    assert (audit.school_id, audit.details["student_id"]) == (school.id, student.id)
    # The alarm: the gauge the alert reads, and the counter of give-ups.
    assert metrics.OUTBOUND_FAILED.labels("notifications")._value.get() == 1
    assert metrics.NOTIFICATION_ATTEMPTS.labels(
        "student-ready", "failed")._value.get() == failed_before + 1
