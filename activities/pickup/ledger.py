"""Delivery of the outbound ledger to a turnstile controller, in order, until it confirms."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import func, select, update
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.pickup import metrics
from activities.pickup.backlog import queue_backlog
from activities.pickup.contracts.board import (
    DrainBatchInput,
    DrainResult,
    LedgerCommand,
    LedgerStatus,
    Outbox,
    PickupErrorCode,
    SubjectKind,
    SyncStatus,
)
from activities.pickup.contracts.names import drain_activity
from activities.pickup.models import AuthorizedPerson, LedgerEntry, School
from activities.pickup.records import audit
from activities.pickup.turnstile_client import (
    TurnstileClients,
    TurnstileRejected,
    TurnstileUnavailable,
)
from shared.db.models import as_utc, utcnow
from shared.heartbeat import beat
from shared.settings import PickupSettings


class LedgerDelivery:
    """Sends pending grant/revoke commands of one controller and records the outcome."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], settings: PickupSettings,
                 clients: TurnstileClients, default_url: str | None = None) -> None:
        self._sessions = sessions
        self._settings = settings
        self._clients = clients
        self._default_url = settings.turnstile_url or default_url

    async def _target(self, controller: int) -> tuple[list[LedgerEntry], str | None, int]:
        async with self._sessions() as session:
            school = await session.get(School, controller)
            url = (school.turnstile_url if school else None) or self._default_url
            entries = list((await session.exec(
                select(LedgerEntry).where(LedgerEntry.controller == controller,
                                          LedgerEntry.status == LedgerStatus.PENDING)
                .order_by(LedgerEntry.id))).all())
        return entries, url, len(entries)

    @activity.defn(name=drain_activity(Outbox.LEDGER))
    async def drain_ledger(self, request: DrainBatchInput) -> DrainResult:
        """Deliver pending entries oldest first; stop at the first unreachable moment.

        Order matters (a grant then its revoke), so an unreachable controller stops the round
        and the activity fails to be retried with backoff; a refused command is marked failed
        (visible, counted) and the next one goes on.
        """
        entries, url, _ = await self._target(request.key)
        delivered = failed = 0
        for entry in entries[: request.batch_size]:
            try:
                if url is None:
                    raise TurnstileUnavailable(f"no turnstile URL for controller {request.key}")
                client = self._clients.for_url(url)
                if entry.command == LedgerCommand.GRANT:
                    device_user = await client.grant(
                        registration=entry.registration, name=entry.name,
                        begin_time=entry.begin_time, end_time=entry.end_time,
                        card_value=entry.card_value, qr_value=entry.qr_value)
                else:
                    await client.revoke(entry.registration, card_value=entry.card_value,
                                        qr_value=entry.qr_value)
                    device_user = None
            except TurnstileRejected as exc:
                await self._settle(entry, LedgerStatus.FAILED, error=str(exc))
                metrics.LEDGER_ATTEMPTS.labels(entry.command, "rejected").inc()
                failed += 1
                continue
            except TurnstileUnavailable as exc:
                await self._attempted(entry, str(exc))
                metrics.LEDGER_ATTEMPTS.labels(entry.command, "unavailable").inc()
                await self._publish()
                raise ApplicationError(str(exc), type=PickupErrorCode.TURNSTILE_UNAVAILABLE,
                                       non_retryable=False) from None
            await self._settle(entry, LedgerStatus.CONFIRMED, device_user=device_user)
            metrics.LEDGER_ATTEMPTS.labels(entry.command, "confirmed").inc()
            delivered += 1
            beat(entry.id)
        remaining = len(entries) - delivered - failed
        await self._publish()
        return DrainResult(delivered=delivered, failed=failed, remaining=remaining)

    async def _attempted(self, entry: LedgerEntry, error: str) -> None:
        async with self._sessions() as session, session.begin():
            await session.exec(update(LedgerEntry).where(LedgerEntry.id == entry.id).values(
                attempts=LedgerEntry.attempts + 1, last_error=error[:500],
                last_attempt_at=utcnow()))

    async def _settle(self, entry: LedgerEntry, status: LedgerStatus, *, error: str | None = None,
                      device_user: int | None = None) -> None:
        now = utcnow()
        async with self._sessions() as session, session.begin():
            values: dict[str, object] = {"status": status, "attempts": LedgerEntry.attempts + 1,
                                         "last_attempt_at": now, "last_error": error}
            if status == LedgerStatus.CONFIRMED:
                values["confirmed_at"] = now
                values["device_user_id"] = device_user
            await session.exec(update(LedgerEntry).where(
                LedgerEntry.id == entry.id, LedgerEntry.status == LedgerStatus.PENDING,
            ).values(**values))
            if entry.subject_kind == SubjectKind.AUTHORIZED_PERSON:
                await _sync_person(session, entry.subject_id, failed=status != "confirmed")
            audit(session, entity="ledger", entity_id=entry.id, action=f"{entry.command}-{status}",
                  actor="turnstile", at=now, school_id=entry.controller, to_state=status,
                  reason=error, registration=entry.registration)

    async def _publish(self) -> None:
        async with self._sessions() as session:
            pending, failed, oldest = await queue_backlog(session, LedgerEntry)
        age = (utcnow() - as_utc(oldest)).total_seconds() if oldest else 0.0
        metrics.set_queue("ledger", pending=pending, failed=failed, oldest_seconds=max(age, 0.0))


async def _sync_person(session: AsyncSession, person_id: int, *, failed: bool) -> None:
    """`synced` once nothing is pending for the person; `failed` if the device refused."""
    pending = (await session.exec(select(func.count()).where(
        LedgerEntry.subject_kind == SubjectKind.AUTHORIZED_PERSON,
        LedgerEntry.subject_id == person_id, LedgerEntry.status == LedgerStatus.PENDING))).one()
    status = SyncStatus.FAILED if failed else SyncStatus.SYNCED
    if failed or pending == 0:
        await session.exec(update(AuthorizedPerson).where(AuthorizedPerson.id == person_id)
                           .values(sync_status=status))
