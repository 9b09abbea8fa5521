"""Grant credentials: a holder's card number and/or QR value, unique within a school."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.exc import IntegrityError
from sqlmodel import delete, or_, select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.contracts.board import PickupErrorCode, SubjectKind
from activities.pickup.errors import not_found, pickup_error
from activities.pickup.models import Credential, School

C = Credential


async def credential_of(session: AsyncSession, *, school_id: int, holder_kind: SubjectKind,
                        holder_id: int) -> Credential | None:
    """The holder's credential at the school, if it has one."""
    return (await session.exec(select(C).where(
        C.school_id == school_id, C.holder_kind == holder_kind,
        C.holder_id == holder_id))).first()


async def put_credential(session: AsyncSession, *, school_id: int, holder_kind: SubjectKind,
                         holder_id: int, card_value: int | None, qr_value: str | None,
                         at: datetime) -> tuple[Credential, Credential | None]:
    """Set the holder's credential at the school; (new, previous values) or 409 when a
    value is someone else's there.

    The check names the clash; the unique indexes settle a concurrent one the same way.
    """
    same_value = [C.card_value == card_value] if card_value is not None else []
    same_value += [C.qr_value == qr_value] if qr_value is not None else []
    if same_value and (await session.exec(select(C.id).where(
            C.school_id == school_id, or_(*same_value),
            or_(C.holder_kind != holder_kind, C.holder_id != holder_id)))).first() is not None:
        raise _taken(school_id)
    current = await credential_of(session, school_id=school_id, holder_kind=holder_kind,
                                  holder_id=holder_id)
    previous = None
    if current is None:
        current = C(school_id=school_id, holder_kind=holder_kind, holder_id=holder_id,
                    card_value=card_value, qr_value=qr_value, created_at=at, updated_at=at)
        session.add(current)
    else:
        previous = C(school_id=school_id, holder_kind=holder_kind, holder_id=holder_id,
                     card_value=current.card_value, qr_value=current.qr_value)
        current.card_value, current.qr_value, current.updated_at = card_value, qr_value, at
    try:
        await session.flush()
    except IntegrityError:
        raise _taken(school_id) from None
    return current, previous


async def attach(session: AsyncSession, *, school_id: int, holder_kind: SubjectKind,
                 holder_id: int, card_value: int | None, qr_value: str | None,
                 at: datetime) -> Credential:
    """Add or replace a holder's credential in the caller's transaction (creation paths)."""
    if await session.get(School, school_id) is None:
        raise not_found("School", school_id)
    credential, _ = await put_credential(session, school_id=school_id, holder_kind=holder_kind,
                                         holder_id=holder_id, card_value=card_value,
                                         qr_value=qr_value, at=at)
    return credential


def _taken(school_id: int):
    return pickup_error(PickupErrorCode.CREDENTIAL_TAKEN,
                        f"That card or QR code is already someone else's at school {school_id}.")


async def drop_credentials(session: AsyncSession, *, holder_kind: SubjectKind,
                           holder_id: int) -> int:
    """Forget a deleted holder's credentials at every school (their values become free)."""
    result = await session.exec(delete(C).where(C.holder_kind == holder_kind,
                                                C.holder_id == holder_id))
    return result.rowcount
