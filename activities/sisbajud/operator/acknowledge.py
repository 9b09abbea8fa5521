"""Acknowledge an alarm or an orphan operation: who (the credential) and why, once."""

from __future__ import annotations

from typing import Any

from sqlalchemy import update
from sqlmodel import col

from activities.sisbajud.operator.payloads import ActionIn
from activities.sisbajud.operator.trail import Sessions, audit, missing
from shared.contracts.sisbajud_errors import SisbajudApiErrorCode, sisbajud_error
from shared.db.models import utcnow
from shared.db.sisbajud_models import SisbajudAlarm, SisbajudOrphan


async def _acknowledge(sessions: Sessions, model, key, what: str, body: ActionIn, actor: str,
                       kind: str, **properties: Any) -> dict[str, Any]:
    async with sessions() as session:
        row = await session.get(model, key)
        if row is None:
            raise missing(what, key)
        if row.acknowledged_at is not None:
            raise sisbajud_error(SisbajudApiErrorCode.ALREADY_ACKNOWLEDGED,
                                 f"{what.capitalize()} {key} was acknowledged by "
                                 f"{row.acknowledged_by}.")
        primary = next(iter(model.__table__.primary_key.columns))
        claimed = await session.exec(update(model).where(  # type: ignore[call-overload]
            primary == key, col(model.acknowledged_at).is_(None),
        ).values(acknowledged_at=utcnow(), acknowledged_by=actor,
                 acknowledgement_reason=body.reason))
        if not claimed.rowcount:
            raise sisbajud_error(SisbajudApiErrorCode.ALREADY_ACKNOWLEDGED,
                                 f"{what.capitalize()} {key} was acknowledged meanwhile.")
        await audit(session, kind, f"{what.capitalize()} {key} acknowledged", actor,
                    body.reason, **properties)
    return {"id": key, "acknowledgedBy": actor, "reason": body.reason}


async def acknowledge_alarm(sessions: Sessions, alarm_id: int, body: ActionIn,
                            actor: str) -> dict[str, Any]:
    """An operator looked at the alarm: who (the credential) and why, once."""
    return await _acknowledge(sessions, SisbajudAlarm, alarm_id, "alarm", body, actor,
                              "AlarmAcknowledged", alarm_id=alarm_id)


async def acknowledge_orphan(sessions: Sessions, operation_id: str, body: ActionIn,
                             actor: str) -> dict[str, Any]:
    """An operator looked at the foreign operation: who (the credential) and why, once."""
    return await _acknowledge(sessions, SisbajudOrphan, operation_id, "orphan", body, actor,
                              "OrphanAcknowledged", operation_id=operation_id)
