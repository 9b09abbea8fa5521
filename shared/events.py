"""The operational events trail: one writer used by every domain."""

from __future__ import annotations

from typing import Any

from sqlmodel.ext.asyncio.session import AsyncSession

from shared.db.models import OperationalEvent


async def record_event(session: AsyncSession, *, domain: str, type: str, message: str,
                       actor: str | None = None, **properties: Any) -> OperationalEvent:
    """Add an event to the caller's transaction (committed with the change it explains)."""
    event = OperationalEvent(domain=domain, type=type, message=message, actor=actor,
                             properties=properties)
    session.add(event)
    return event
