"""Worker start-up for the domain: institutions on record, the tick schedule, the activities."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import httpx
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleIntervalSpec,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleSpec,
)

from activities.sisbajud.clients import (
    MissingCredentials,
    mensageria_credentials,
    midaz_credentials,
)
from activities.sisbajud.contracts.names import TICK_WORKFLOW
from activities.sisbajud.contracts.orders import OrderOptions, TickInput, tick_schedule_id
from activities.sisbajud.orders import OrderActivities
from activities.sisbajud.ownership import record_owner
from activities.sisbajud.plans import PlanActivities
from activities.sisbajud.reconcile import ReconcileActivities
from activities.sisbajud.resolution_legs import ResolutionActivities
from activities.sisbajud.tick import TemporalProvider, TickActivities
from activities.sisbajud.writes import WriteActivities
from shared.schedules import ensure_schedule
from shared.settings import Settings

# A tick missed while the server was away is not worth replaying: the next one does it all.
CATCHUP_WINDOW = timedelta(minutes=1)
log = logging.getLogger("esteira.sisbajud")


def check_credentials(settings: Settings) -> None:
    """Refuse to start without OAuth clients (Development falls back to the simulators')."""
    sis = settings.sisbajud
    missing = []
    try:
        mensageria_credentials(settings)
    except MissingCredentials:
        missing.append("ESTEIRA_SISBAJUD__MENSAGERIA_CLIENT_ID/_CLIENT_SECRET")
    for institution in sis.institutions:
        try:
            midaz_credentials(settings, institution)
        except MissingCredentials:
            missing.append(f"ESTEIRA_SISBAJUD__INSTITUTIONS[{institution.id}]"
                           ".client_id/client_secret")
    if missing:
        raise MissingCredentials(f"SISBAJUD executor: set {', '.join(missing)}")


def order_options(settings: Settings) -> OrderOptions:
    """The waits of the order workflow, from `Sisbajud:*`."""
    sis = settings.sisbajud
    return OrderOptions(
        fetch_retry_initial_seconds=sis.fetch_retry_initial_seconds,
        fetch_retry_max_seconds=sis.fetch_retry_max_seconds,
        write_heartbeat_timeout_seconds=sis.write_heartbeat_timeout_seconds,
        activity_heartbeat_timeout_seconds=sis.activity_heartbeat_timeout_seconds,
        parent_poll_seconds=sis.parent_poll_seconds,
        parent_wait_max_seconds=sis.parent_wait_max_seconds,
        deadline_margin_seconds=sis.response_deadline_margin_seconds,
        heartbeat_every_seconds=sis.heartbeat_every_seconds,
        human_decision_after_beats=sis.human_decision_after_beats,
        continue_as_new_after_events=sis.continue_as_new_after_events,
    )


def tick_input(settings: Settings) -> TickInput:
    """What every scheduled tick runs with."""
    sis = settings.sisbajud
    return TickInput(task_queue=sis.task_queue, options=order_options(settings),
                     batch_size=sis.batch_size)


async def ensure_tick_schedule(client: Client, settings: Settings) -> str:
    """Create the tick's Temporal Schedule, or bring an existing one up to these settings."""
    queue = settings.sisbajud.task_queue
    schedule_id = tick_schedule_id(queue)
    schedule = Schedule(
        action=ScheduleActionStartWorkflow(TICK_WORKFLOW, tick_input(settings),
                                           id=schedule_id, task_queue=queue),
        spec=ScheduleSpec(intervals=[ScheduleIntervalSpec(
            every=timedelta(seconds=settings.sisbajud.tick_every_seconds))]),
        # One cycle at a time: a slow cycle makes the next one wait, never run beside it.
        policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP, catchup_window=CATCHUP_WINDOW),
    )
    await ensure_schedule(client, schedule_id, schedule)
    log.info("Tick schedule %s every %ss", schedule_id, settings.sisbajud.tick_every_seconds)
    return schedule_id


async def claim_institutions(sessions: async_sessionmaker[AsyncSession], settings: Settings,
                             http: httpx.AsyncClient | None = None) -> None:
    """Create the configured institutions unknown to the store, owned by our
    `EXECUTOR_M2M_SUBJECT` (an existing record keeps its owner)."""
    for institution in settings.sisbajud.institutions:
        async with sessions() as session:
            await record_owner(session, institution.id, settings.sisbajud.m2m_subject)
            await session.commit()


def activities(settings: Settings, sessions: async_sessionmaker[AsyncSession],
               http: httpx.AsyncClient, temporal: TemporalProvider
               ) -> list[Callable[..., Any]]:
    """Every activity of the domain, bound to its dependencies."""
    orders = OrderActivities(settings, sessions, http)
    plans = PlanActivities(settings, sessions, http)
    writes = WriteActivities(settings, sessions, http)
    tick = TickActivities(settings, sessions, http, temporal)
    reconcile = ReconcileActivities(settings, sessions, http)
    resolution = ResolutionActivities(settings, sessions, http)
    return [orders.fetch_order, orders.begin_revision, orders.check_ownership, orders.settle,
            orders.queue_result,
            plans.plan_block, plans.plan_release, plans.plan_info,
            writes.ensure_block_account, writes.write_ledger, reconcile.reconcile_write,
            resolution.resolution_legs,
            tick.ingest, tick.orphans, tick.monitor, tick.drain]
