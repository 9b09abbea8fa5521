"""The signer's gauges a scrape reads from the store (the API process sets them each time)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC
from functools import partial

from prometheus_client import Gauge
from sqlalchemy import func
from sqlmodel import select

from activities.signer.contracts.jobs import FolderStatus, JobStatus
from activities.signer.metrics import (
    ARCHIVE_OLDEST_EXPIRY,
    FOLDER_STATUS,
    PIPELINE_PAUSED,
    PROFILE_DEGRADED,
    QUEUE_DEPTH,
)
from activities.signer.models.jobs import ArchivedOutput, InputFolderState, Job
from activities.signer.models.pipeline import read_pipeline_state
from activities.signer.operator.profiles_admin import SignerProfiles
from shared.db.engine import Sessions
from shared.readiness import Probe, evaluate

WAITING = (JobStatus.QUEUED, JobStatus.AWAITING_APPROVAL, JobStatus.AWAITING_SIGNER,
           JobStatus.PROCESSING, JobStatus.VERIFYING)
# Sets each label set of a gauge and drops the ones it set last time but not now.
Publish = Callable[[Gauge, dict[tuple[str, ...], float]], None]


class SignerGauges:
    """Each gauge refreshed from the store; the caller decides what a failure costs."""

    def __init__(self, sessions: Sessions, profiles: SignerProfiles) -> None:
        self._sessions = sessions
        self._profiles = profiles

    async def queue_depth(self) -> None:
        """`bulksigner_queue_depth{status}` for every waiting or running status."""
        waiting = [status.value for status in WAITING]
        async with self._sessions() as session:
            counts = dict((await session.exec(
                select(Job.status, func.count()).where(Job.status.in_(waiting))
                .group_by(Job.status))).all())
        for status in waiting:
            QUEUE_DEPTH.labels(status=status).set(counts.get(status, 0))

    async def pipeline_paused(self) -> None:
        """`bulksigner_pipeline_paused`: 1 while the pause row says paused."""
        async with self._sessions() as session:
            paused = (await read_pipeline_state(session)).paused
        PIPELINE_PAUSED.set(1 if paused else 0)

    async def folder_status(self, publish: Publish) -> None:
        """`bulksigner_input_folder_status{folder,status}` from the watchers' rows."""
        async with self._sessions() as session:
            rows = (await session.exec(select(InputFolderState))).all()
        publish(FOLDER_STATUS, {(row.name, each.value): 1.0 if row.status == each.value else 0.0
                                for row in rows for each in FolderStatus})

    async def profile_degraded(self, publish: Publish) -> None:
        """`bulksigner_profile_degraded{profile}` for each enabled profile that holds a key,
        judged as its `signing-profile:<name>` readiness line is."""
        # Each judged as a probe: bounded by the probe timeout, an error counts as degraded.
        verdict = await evaluate([Probe(view.row.name, partial(self._profiles.health, view.row))
                                  for view in await self._profiles.all()
                                  if view.row.enabled and not view.keyless])
        publish(PROFILE_DEGRADED, {(check.name,): 0.0 if check.ok else 1.0
                                   for check in verdict.checks})

    async def archive_expiry(self) -> None:
        """The archive's oldest TSA expiry as a Unix time (0 when nothing is archived)."""
        async with self._sessions() as session:
            oldest = (await session.exec(select(func.min(ArchivedOutput.tsa_expires_at)))).first()
        if oldest is not None and oldest.tzinfo is None:
            oldest = oldest.replace(tzinfo=UTC)  # SQLite hands back naive UTC
        ARCHIVE_OLDEST_EXPIRY.set(oldest.timestamp() if oldest is not None else 0)
