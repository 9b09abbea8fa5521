"""What the pickup domain runs on a worker: timers, sweeps and drains on `pickup-v1`."""

from __future__ import annotations

import logging

from activities.pickup.contracts.board import TASK_QUEUE
from activities.pickup.day_cycle import DayCycle
from activities.pickup.day_schedule import ensure_day_cycle_schedule
from activities.pickup.kick import Kicker
from activities.pickup.ledger import LedgerDelivery
from activities.pickup.notifications import LogSender, NotificationDelivery, WebhookSender
from activities.pickup.schedules import ensure_schedules
from activities.pickup.sweeps import PickupSweeps
from activities.pickup.wiring import activity_client, dev_turnstile_url, turnstile_clients
from shared.http_client import pooled_client
from shared.settings import ConfigurationError, Settings
from shared.temporal import connect
from shared.worker_shape import DomainWorker, WorkerDeps
from workflows.pickup import WORKFLOWS

log = logging.getLogger("esteira.pickup.worker")
# httpx's own defaults, kept: 5 s per call, up to 100 connections at once.
HTTP_TIMEOUT_SECONDS = 5.0
HTTP_CONNECTIONS = 100


def _sender(settings: Settings, http) -> WebhookSender | LogSender:
    """The guardian-notification sender; unsigned webhooks only in Development."""
    pickup = settings.pickup
    if not pickup.notification_webhook_url:
        return LogSender()
    secret = pickup.notification_webhook_secret
    if secret is None and settings.environment != "Development":
        raise ConfigurationError(
            "Pickup notifications: ESTEIRA_PICKUP__NOTIFICATION_WEBHOOK_SECRET (whsec_…) is "
            "required with ESTEIRA_PICKUP__NOTIFICATION_WEBHOOK_URL outside Development, so "
            "the receiver can tell our deliveries from forged ones.")
    return WebhookSender(http, pickup.notification_webhook_url,
                         secret.get_secret_value() if secret else None)


async def build(deps: WorkerDeps) -> list[DomainWorker]:
    """Wire the activities, then create or update the seven sweep schedules."""
    pickup = deps.settings.pickup
    http = await deps.resources.enter_async_context(pooled_client(
        timeout=HTTP_TIMEOUT_SECONDS, connections=HTTP_CONNECTIONS))
    kicker = Kicker(pickup, activity_client)
    sender = _sender(deps.settings, http)
    activities = [
        *PickupSweeps(deps.sessions, pickup, kicker).all(),
        DayCycle(deps.sessions, kicker).start_days,
        LedgerDelivery(deps.sessions, pickup, turnstile_clients(pickup, http),
                       default_url=dev_turnstile_url(deps.settings)).drain_ledger,
        NotificationDelivery(deps.sessions, sender, pickup).drain_notifications,
    ]
    try:
        # Schedules live on the server; they start sweeps even while no worker polls.
        client = await connect(deps.settings)
        await ensure_schedules(client, pickup)
        await ensure_day_cycle_schedule(client, pickup)
    except Exception:
        log.exception("Could not put the pickup sweep schedules in place; retried next start")
    return [DomainWorker(TASK_QUEUE, workflows=WORKFLOWS, activities=activities)]
