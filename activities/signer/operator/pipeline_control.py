"""Pause and resume: durable, idempotent, and exactly one winner when they race."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.metrics import PIPELINE_PAUSED
from activities.signer.operator.errors import refuse
from shared.contracts.signer import SignerErrorCode
from shared.db.models import OperationalEvent, PipelineState, utcnow
from shared.db.pipeline import read_pipeline_state
from shared.free_text import bounded_reason


@dataclass(frozen=True)
class PipelineView:
    """The pause state as operators see it."""

    paused: bool
    reason: str | None
    changed_by: str | None
    changed_at: datetime | None


async def pipeline_state(sessions: async_sessionmaker[AsyncSession]) -> PipelineView:
    """The current pause state."""
    async with sessions() as session:
        state = await read_pipeline_state(session)
    return PipelineView(state.paused, state.reason, state.changed_by,
                        state.changed_at if state.version else None)


async def set_paused(sessions: async_sessionmaker[AsyncSession], *, paused: bool,
                     actor: str, reason: str | None = None) -> PipelineView:
    """Pause or resume; already in that state -> no-op; lost race -> pipeline.race-lost."""
    reason = bounded_reason(reason)
    async with sessions() as session:
        state = await session.get(PipelineState, 1)
        if state is not None and state.paused == paused:
            return await pipeline_state(sessions)
        now = utcnow()
        values = {"paused": paused, "reason": reason if paused else None,
                  "changed_by": actor, "changed_at": now}
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
    return await pipeline_state(sessions)


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
