"""The operator actions' common steps: conditional updates, the events trail, refusals."""

from __future__ import annotations

from typing import Any

from sqlmodel.ext.asyncio.session import AsyncSession

from activities.sisbajud.contracts.errors import SisbajudApiErrorCode, sisbajud_error
from activities.sisbajud.store import DOMAIN
from shared.errors import ErrorCode, EsteiraError
from shared.events import record_event

PARKED = "PARKED"


async def changed(session: AsyncSession, statement, what: str) -> None:
    """Run a conditional update; 409 when another operator got there first."""
    if not (await session.exec(statement)).rowcount:  # type: ignore[call-overload]
        raise sisbajud_error(SisbajudApiErrorCode.NOT_PARKED, f"{what} changed meanwhile.")


async def audit(session: AsyncSession, kind: str, message: str, actor: str, reason: str,
                **properties: Any) -> None:
    """Record the action in the operational events trail, with who and why; commits."""
    await record_event(session, domain=DOMAIN, type=kind, message=f"{message} by {actor}: "
                       f"{reason}", actor=actor, reason=reason, **properties)
    await session.commit()


def missing(what: str, ident: object) -> EsteiraError:
    """404: no such row."""
    return EsteiraError(ErrorCode.NOT_FOUND, f"No {what} {ident}.")


def not_parked(what: str, state: str) -> EsteiraError:
    """409 `sisbajud.not-parked`."""
    return sisbajud_error(SisbajudApiErrorCode.NOT_PARKED, f"{what} is {state}, not parked.")
