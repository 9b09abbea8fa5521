"""The Temporal Schedule that renews archived B-LTA files (pausable in the Temporal UI)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta

from temporalio.client import (
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleIntervalSpec,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleSpec,
)

from activities.signer.contracts.archive import (
    ARCHIVE_RENEWAL_WORKFLOW,
    RenewArchivesInput,
    archive_schedule_id,
)
from shared.schedules import ensure_schedule
from shared.settings import Settings
from shared.temporal import connect

log = logging.getLogger("esteira.signer.archive")
# A pass missed while the server was away is not worth replaying: the next one does it all.
CATCHUP_WINDOW = timedelta(minutes=5)
RETRY_SECONDS = 10.0


def archive_schedule(settings: Settings, task_queue: str) -> Schedule:
    """Every `Signing:ArchiveCheckEverySeconds`, one pass at a time."""
    signing = settings.signing
    schedule_id = archive_schedule_id(settings.pipeline.task_queue_suffix)
    request = RenewArchivesInput(margin_seconds=signing.archive_renewal_margin_days * 86400)
    return Schedule(
        action=ScheduleActionStartWorkflow(ARCHIVE_RENEWAL_WORKFLOW, request, id=schedule_id,
                                           task_queue=task_queue),
        spec=ScheduleSpec(intervals=[ScheduleIntervalSpec(
            every=timedelta(seconds=signing.archive_check_every_seconds))]),
        # A slow pass makes the next one wait, never run beside it.
        policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP, catchup_window=CATCHUP_WINDOW))


async def ensure_archive_schedule(settings: Settings, task_queue: str,
                                  stop: asyncio.Event) -> None:
    """Create or update the schedule (keeping an operator's pause); retried until it holds."""
    schedule_id = archive_schedule_id(settings.pipeline.task_queue_suffix)
    while not stop.is_set():
        try:
            client = await connect(settings)
            await ensure_schedule(client, schedule_id, archive_schedule(settings, task_queue))
        except Exception as exc:
            log.warning("Archive renewal schedule %s not set yet (%s); trying again",
                        schedule_id, exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), RETRY_SECONDS)
            continue
        log.info("Archive renewal schedule %s every %ss", schedule_id,
                 settings.signing.archive_check_every_seconds)
        return
