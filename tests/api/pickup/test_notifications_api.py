"""`/api/pickup/notifications`: the list, the alarm gauge, and a failed one's requeue."""

from __future__ import annotations

from activities.pickup.contracts.board import DrainBatchInput, Outbox
from activities.pickup.models import AuditEntry, Notification
from activities.pickup.notifications import NotificationDelivery


class Sender:
    def __init__(self) -> None:
        self.sent: list[str] = []

    async def send(self, notification: Notification) -> None:
        self.sent.append(notification.idempotency_key)


async def _rows(api):
    school = await api.ok("POST", "/api/pickup/schools", json={"name": "Escola"})
    student = await api.ok("POST", "/api/pickup/students",
                           json={"schoolId": school["id"], "name": "Ana"})
    return await api.seed.add(
        Notification(guardian_id=1, student_id=student["id"], kind="student-ready",
                     message="m", idempotency_key="gave-up", status="failed", attempts=8,
                     last_error="ConnectionError: down"),
        Notification(guardian_id=1, student_id=student["id"], kind="picked-up", message="m",
                     idempotency_key="waiting"))


def _metric(text: str, name: str) -> float:
    [line] = [line for line in text.splitlines() if line.startswith(name)]
    return float(line.rsplit(" ", 1)[1])


async def test_listing_needs_the_api_key_and_filters_by_status(pickup_api):
    api = pickup_api
    failed, _ = await _rows(api)
    for method, path in (("GET", "/api/pickup/notifications"),
                         ("POST", f"/api/pickup/notifications/{failed.id}/requeue")):
        refused = await api.http.request(method, path, headers={"X-API-Key": "wrong"})
        assert (refused.status_code, refused.json()["code"]) == (401, "auth.invalid-key")

    listed = await api.ok("GET", "/api/pickup/notifications", params={"status": "failed"})

    assert (listed["pending"], listed["failed"]) == (1, 1)
    assert [(n["id"], n["status"], n["attempts"]) for n in listed["items"]] == [
        (failed.id, "failed", 8)]
    everything = await api.ok("GET", "/api/pickup/notifications")
    assert len(everything["items"]) == 2
    bad = await api.http.get("/api/pickup/notifications", params={"status": "lost"})
    assert bad.status_code == 422


async def test_a_failed_notification_raises_the_alarm_gauge(pickup_api):
    await _rows(pickup_api)
    scrape = await pickup_api.http.get("/api/metrics")
    assert _metric(scrape.text, 'esteira_pickup_outbound_failed{queue="notifications"}') == 1.0


async def test_requeue_only_a_failed_one_then_it_is_delivered(pickup_api):
    api = pickup_api
    failed, waiting = await _rows(api)

    pending = await api.http.post(f"/api/pickup/notifications/{waiting.id}/requeue")
    assert (pending.status_code, pending.json()["code"]) == (
        409, "pickup.notification-not-failed")
    missing = await api.http.post("/api/pickup/notifications/999999/requeue")
    assert (missing.status_code, missing.json()["code"]) == (404, "resource.not-found")

    requeued = await api.ok("POST", f"/api/pickup/notifications/{failed.id}/requeue")

    assert (requeued["status"], requeued["attempts"], requeued["nextAttemptAt"]) == (
        "pending", 0, None)
    again = await api.http.post(f"/api/pickup/notifications/{failed.id}/requeue")
    assert again.status_code == 409
    [audit] = await api.seed.all(AuditEntry, AuditEntry.entity == "notification")
    assert (audit.entity_id, audit.action, audit.from_state, audit.to_state, audit.actor) == (
        failed.id, "requeue", "failed", "pending", "api-key")
    sender = Sender()
    delivery = NotificationDelivery(api.context.sessions, sender, api.context.settings.pickup)
    result = await delivery.drain_notifications(DrainBatchInput(outbox=Outbox.NOTIFICATIONS))
    assert (result.delivered, sender.sent) == (2, ["gave-up", "waiting"])
    assert (await api.seed.get(Notification, failed.id)).status == "sent"
