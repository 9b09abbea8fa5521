"""Start the Temporal work a committed change left behind: timers and outbox drains."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable

from temporalio.client import Client
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy

from activities.pickup.contracts.board import (
    DrainInput,
    Outbox,
    TimerInput,
    drain_workflow_id,
    timer_workflow_id,
)
from activities.pickup.contracts.names import (
    DRAIN_WORKFLOW,
    ENTITY_TIMER_WORKFLOW,
    KICK_SIGNAL,
    TASK_QUEUE,
)
from shared.contracts import search_attributes
from shared.logs import props
from shared.settings import PickupSettings
from shared.visibility import start_workflow

log = logging.getLogger("esteira.pickup")


class Kicker:
    """Signal-with-start of drains and idempotent timer starts.

    A failure here is logged, never raised: the rows are committed, and the sweeps (and the
    queue snapshot's redrive) pick up whatever a lost kick left pending.
    """

    def __init__(self, settings: PickupSettings, client: Callable[[], Awaitable[Client]]) -> None:
        self._settings = settings
        self._client = client

    def drain_input(self, outbox: Outbox, key: int) -> DrainInput:
        """Drain parameters from settings."""
        return DrainInput(outbox=outbox, key=key,
                          retry_initial_seconds=self._settings.ledger_retry_initial_seconds,
                          retry_max_interval_seconds=self._settings.ledger_retry_max_seconds)

    async def drains(self, controllers: Iterable[int] = (), notifications: bool = False) -> None:
        """Wake the ledger drain of each controller, and the notification drain."""
        targets = [(Outbox.LEDGER, c) for c in sorted(set(controllers))]
        if notifications:
            targets.append((Outbox.NOTIFICATIONS, 0))
        for outbox, key in targets:
            try:
                client = await self._client()
                await client.start_workflow(
                    DRAIN_WORKFLOW, self.drain_input(outbox, key),
                    id=drain_workflow_id(outbox, key), task_queue=TASK_QUEUE,
                    start_signal=KICK_SIGNAL,
                    id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE)
            except Exception as exc:
                log.warning("Could not wake the %s drain %s: %s", outbox, key, exc,
                            extra=props(Outbox=str(outbox), Key=key))

    async def timers(self, timers: Iterable[TimerInput]) -> None:
        """Start per-entity timers (an already running one is kept)."""
        if not self._settings.timers_enabled:
            return
        for timer in timers:
            workflow_id = timer_workflow_id(timer.kind, timer.entity_id, timer.version)
            try:
                client = await self._client()
                await start_workflow(
                    client, ENTITY_TIMER_WORKFLOW, timer,
                    search_attributes=search_attributes.pickup_entity(
                        school_id=timer.school_id, student_id=timer.student_id),
                    memo=search_attributes.summary_memo(
                        f"{timer.kind.upper()} timer of student {timer.student_id} at "
                        f"school {timer.school_id}, due {timer.deadline.isoformat()}"),
                    id=workflow_id, task_queue=TASK_QUEUE,
                    id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                    id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE)
            except Exception as exc:
                log.warning("Could not start timer %s: %s", workflow_id, exc,
                            extra=props(WorkflowId=workflow_id))

    async def after(self, *, controllers: Iterable[int] = (), notifications: int = 0,
                    timers: Iterable[TimerInput] = ()) -> None:
        """Everything a transition asked for."""
        await self.timers(timers)
        await self.drains(controllers, notifications > 0)
