"""Which transition tells the guardians what: one outbox row per guardian, keyed by version."""

from __future__ import annotations

from datetime import datetime

from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup import guardian_texts as texts
from activities.pickup.contracts.board import NotificationKind
from activities.pickup.models import Arrival, EarlyRelease, Guardian, Student
from activities.pickup.records import notify_guardians


async def arrival_acknowledged(session: AsyncSession, student: Student, at: datetime) -> int:
    """AT_SCHOOL -> AWAITING: the school has the "estou chegando"."""
    return await notify_guardians(
        session, student, kind=NotificationKind.ARRIVAL_ACKNOWLEDGED, at=at,
        message=texts.arrival_acknowledged(student.name),
        key=f"arrival:{student.id}:{student.version}")


async def ready(session: AsyncSession, student: Student, at: datetime) -> int:
    """AWAITING -> READY: the exit is open."""
    return await notify_guardians(
        session, student, kind=NotificationKind.READY, at=at, message=texts.ready(student.name),
        key=f"ready:{student.id}:{student.version}")


async def picked_up(session: AsyncSession, student: Student, at: datetime, *,
                    origin: str) -> int:
    """READY -> PICKED_UP, naming the guardian whose arrival signal led to it."""
    by = None
    arrival = await session.get(Arrival, student.arrival_id) if student.arrival_id else None
    if arrival is not None and arrival.guardian_id is not None:
        guardian = await session.get(Guardian, arrival.guardian_id)
        by = guardian.name if guardian else None
    return await notify_guardians(
        session, student, kind=NotificationKind.PICKED_UP, at=at,
        message=texts.picked_up(student.name, by=by, turnstile=origin == "turnstile"),
        key=f"picked-up:{student.id}:{student.version}")


async def early_release_approved(session: AsyncSession, release: EarlyRelease,
                                 at: datetime) -> int:
    """An early release was approved."""
    student = await session.get(Student, release.student_id)
    return await notify_guardians(
        session, student, kind=NotificationKind.EARLY_RELEASE_APPROVED, at=at,
        message=texts.early_release_approved(student.name),
        key=f"early-release-approved:{release.id}:{release.version}")
