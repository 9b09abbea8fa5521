"""Pause and resume: durable, idempotent, and exactly one winner when they race; and who
polls the signer's task queues."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest

from activities.signer.contracts.jobs import SignerErrorCode, task_queues
from activities.signer.metrics import PIPELINE_PAUSED
from activities.signer.models.pipeline import read_pipeline_state
from activities.signer.operator.errors import refuse
from shared.db.engine import Sessions
from shared.db.models import OperationalEvent, PipelineState, utcnow
from shared.free_text import bounded_reason
from shared.settings import Settings
from shared.temporal import TemporalHandle

# A page showing the pollers must render while Temporal is down; it then says so.
POLLERS_TIMEOUT_SECONDS = 2.0
_QUEUE_KINDS = (TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW, TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY)


@dataclass(frozen=True)
class PipelineView:
    """The pause state as operators see it."""

    paused: bool
    reason: str | None
    changed_by: str | None
    changed_at: datetime | None


@dataclass(frozen=True)
class Poller:
    """A worker polling one of the signer's task queues, as Temporal reports it."""

    task_queue: str
    identity: str
    last_access: datetime | None


@dataclass(frozen=True)
class Pollers:
    """The workers polling the signer's queues, or why Temporal could not say."""

    pollers: list[Poller]
    error: str | None = None


class SignerPipeline:
    """The pipeline's pause flag (read by the workers' gate) and its pollers."""

    def __init__(self, settings: Settings, sessions: Sessions, temporal: TemporalHandle) -> None:
        self._settings = settings
        self._sessions = sessions
        self._temporal = temporal

    async def state(self) -> PipelineView:
        """The current pause state."""
        async with self._sessions() as session:
            state = await read_pipeline_state(session)
        return PipelineView(state.paused, state.reason, state.changed_by,
                            state.changed_at if state.version else None)

    async def pause(self, *, actor: str, reason: str | None = None) -> PipelineView:
        """Hold the pipeline (idempotent); in-flight jobs finish."""
        return await self._set(paused=True, actor=actor, reason=reason)

    async def resume(self, *, actor: str) -> PipelineView:
        """Resume claiming (idempotent)."""
        return await self._set(paused=False, actor=actor)

    async def _set(self, *, paused: bool, actor: str, reason: str | None = None
                   ) -> PipelineView:
        """Already in that state -> no-op; a lost race -> pipeline.race-lost."""
        reason = bounded_reason(reason)
        async with self._sessions() as session:
            state = await session.get(PipelineState, 1)
            if state is not None and state.paused == paused:
                return await self.state()
            values = {"paused": paused, "reason": reason if paused else None,
                      "changed_by": actor, "changed_at": utcnow()}
            try:
                if state is None:
                    session.add(PipelineState(id=1, version=1, **values))
                    await session.flush()
                else:
                    result = await session.exec(
                        update(PipelineState)
                        .where(PipelineState.id == 1, PipelineState.version == state.version)
                        .values(version=state.version + 1, **values))
                    if result.rowcount != 1:
                        raise _race_lost()
            except IntegrityError:
                await session.rollback()
                raise _race_lost() from None
            session.add(_event(paused, actor, reason))
            await session.commit()
        PIPELINE_PAUSED.set(1 if paused else 0)
        return await self.state()

    async def pollers(self) -> Pollers:
        """The workers polling the signer's queues now (an error, not a wait, when Temporal
        does not answer within POLLERS_TIMEOUT_SECONDS)."""
        try:
            client = await asyncio.wait_for(self._temporal(), POLLERS_TIMEOUT_SECONDS)
            found = []
            for queue in task_queues(self._settings.pipeline.task_queue_suffix):
                for kind in _QUEUE_KINDS:
                    answer = await client.workflow_service.describe_task_queue(
                        DescribeTaskQueueRequest(namespace=client.namespace,
                                                 task_queue=TaskQueue(name=queue),
                                                 task_queue_type=kind),
                        timeout=timedelta(seconds=POLLERS_TIMEOUT_SECONDS))
                    found += [Poller(queue, p.identity,
                                     p.last_access_time.ToDatetime()
                                     if p.HasField("last_access_time") else None)
                              for p in answer.pollers]
            return Pollers(found)
        except Exception as exc:
            return Pollers([], f"Temporal did not answer: {type(exc).__name__}")


def _event(paused: bool, actor: str, reason: str | None) -> OperationalEvent:
    if paused:
        message = "Pipeline paused by operator." + (
            f" Reason: {reason.rstrip('.')}." if reason else "")
        return OperationalEvent(domain="signer", type="PipelinePaused", message=message,
                                actor=actor, properties={"reason": reason})
    return OperationalEvent(domain="signer", type="PipelineResumed",
                            message="Pipeline resumed by operator.", actor=actor, properties={})


def _race_lost():
    return refuse(SignerErrorCode.PIPELINE_RACE_LOST,
                  "A concurrent pause/resume won; read GET /api/pipeline/state and retry if "
                  "your intent still holds.")
