"""The seven sweeps and the per-entity timer: idempotent, batched, CAS-guarded reconcilers."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import delete, select
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio import activity

from activities.pickup import metrics
from activities.pickup.access import delete_expired_links, prune_tokens
from activities.pickup.authorizations import expire_early_releases, expire_persons
from activities.pickup.backlog import queue_backlog
from activities.pickup.board import expire_arrival, revert_ready
from activities.pickup.bulk import expire_arrivals_batch, revert_ready_batch
from activities.pickup.contracts.board import (
    LedgerStatus,
    NotificationStatus,
    RunSweepInput,
    Sweep,
    SweepResult,
    TimerInput,
    TimerKind,
    TimerResult,
)
from activities.pickup.contracts.names import FIRE_TIMER_ACTIVITY, sweep_activity
from activities.pickup.guardian_sign_in import prune_sign_in
from activities.pickup.kick import Kicker
from activities.pickup.models import LedgerEntry, Notification, QueueSnapshot
from shared.db.models import as_utc, utcnow
from shared.heartbeat import beat
from shared.settings import PickupSettings


class PickupSweeps:
    """Activities run by the sweep schedules and the per-entity timers."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], settings: PickupSettings,
                 kicker: Kicker) -> None:
        self._sessions = sessions
        self._settings = settings
        self._kicker = kicker

    def _now(self, request: RunSweepInput) -> datetime:
        return request.now or utcnow()

    def _done(self, result: SweepResult) -> SweepResult:
        metrics.SWEEP_CHANGED.labels(result.sweep).inc(result.changed)
        metrics.SWEEP_SKIPPED.labels(result.sweep).inc(result.skipped)
        return result

    @activity.defn(name=sweep_activity(Sweep.EXPIRE_AUTHORIZATIONS))
    async def expire_authorizations(self, request: RunSweepInput) -> SweepResult:
        """Hourly: temporary authorized persons past validity -> expired (+ revoke if approved)."""
        changed = skipped = ledger = 0
        controllers: set[int] = set()
        while True:
            async with self._sessions() as session, session.begin():
                batch = await expire_persons(session, now=self._now(request), at=utcnow(),
                                             actor="sweep:" + request.sweep,
                                             limit=request.batch_size)
            changed, skipped = changed + batch.changed, skipped + batch.examined - batch.changed
            ledger += batch.ledger
            controllers |= batch.controllers
            beat(changed)
            if batch.examined < request.batch_size or not batch.changed:
                break
        await self._kicker.drains(controllers)
        return self._done(SweepResult(sweep=request.sweep, changed=changed, skipped=skipped,
                                      ledger_enqueued=ledger))

    @activity.defn(name=sweep_activity(Sweep.EXPIRE_EARLY_RELEASES))
    async def expire_early_releases(self, request: RunSweepInput) -> SweepResult:
        """Hourly: unused early releases past their date -> expired (audit only)."""
        changed = skipped = 0
        while True:
            async with self._sessions() as session, session.begin():
                batch = await expire_early_releases(session, now=self._now(request),
                                                    at=utcnow(), actor="sweep:" + request.sweep,
                                                    limit=request.batch_size)
            changed, skipped = changed + batch.changed, skipped + batch.examined - batch.changed
            beat(changed)
            if batch.examined < request.batch_size or not batch.changed:
                break
        return self._done(SweepResult(sweep=request.sweep, changed=changed, skipped=skipped))

    @activity.defn(name=sweep_activity(Sweep.DELETE_EXPIRED_LINKS))
    async def delete_expired_links(self, request: RunSweepInput) -> SweepResult:
        """Daily 00:00: delete expired temporary links, one `StudentRosterChanged` each."""
        changed = 0
        while True:
            async with self._sessions() as session, session.begin():
                batch = await delete_expired_links(session, now=self._now(request), at=utcnow(),
                                                   actor="sweep:" + request.sweep,
                                                   limit=request.batch_size)
            changed += batch.changed
            beat(changed)
            if batch.examined < request.batch_size or not batch.changed:
                break
        return self._done(SweepResult(sweep=request.sweep, changed=changed, events=changed))

    @activity.defn(name=sweep_activity(Sweep.CLOSE_ARRIVALS))
    async def close_arrivals(self, request: RunSweepInput) -> SweepResult:
        """Every minute: close expired arrival signals, reverting students still AWAITING."""
        changed = skipped = events = 0
        while True:
            async with self._sessions() as session, session.begin():
                batch = await expire_arrivals_batch(session, cutoff=self._now(request),
                                                    at=utcnow(), actor="sweep:" + request.sweep,
                                                    limit=request.batch_size)
            changed, skipped, events = (changed + batch.changed, skipped + batch.skipped,
                                        events + batch.reverted)
            beat(changed)
            if batch.examined < request.batch_size or not batch.changed:
                break
        return self._done(SweepResult(sweep=request.sweep, changed=changed, skipped=skipped,
                                      events=events))

    @activity.defn(name=sweep_activity(Sweep.REVERT_READY))
    async def revert_ready(self, request: RunSweepInput) -> SweepResult:
        """Every 5 minutes: READY past the timeout -> AT_SCHOOL, unless the pickup won the race."""
        cutoff = self._now(request) - timedelta(minutes=self._settings.ready_timeout_minutes)
        changed, skipped, notes = 0, 0, 0
        controllers: set[int] = set()
        while True:
            async with self._sessions() as session, session.begin():
                batch = await revert_ready_batch(session, cutoff=cutoff, at=utcnow(),
                                                 actor="sweep:" + request.sweep,
                                                 limit=request.batch_size)
            changed, skipped = changed + batch.changed, skipped + batch.skipped
            notes += batch.notifications
            controllers |= batch.controllers
            beat(changed)
            if batch.examined < request.batch_size or not batch.changed:
                break
        await self._kicker.drains(controllers, notes > 0)
        return self._done(SweepResult(sweep=request.sweep, changed=changed, skipped=skipped,
                                      ledger_enqueued=changed, notifications_enqueued=notes,
                                      events=changed))

    @activity.defn(name=sweep_activity(Sweep.PRUNE_TOKENS))
    async def prune_tokens(self, request: RunSweepInput) -> SweepResult:
        """Daily: delete guardian tokens (app and page sessions) and sign-in links expired
        more than 24 h ago, and sign-in request counts as old."""
        cutoff = self._now(request) - timedelta(hours=self._settings.token_prune_after_hours)
        changed = 0
        while True:
            async with self._sessions() as session, session.begin():
                tokens = await prune_tokens(session, cutoff=cutoff, limit=request.batch_size)
                links = await prune_sign_in(session, cutoff=cutoff, limit=request.batch_size)
            changed += tokens.changed + links.changed
            beat(changed)
            if max(tokens.examined, links.examined) < request.batch_size or not (
                    tokens.changed or links.changed):
                break
        return self._done(SweepResult(sweep=request.sweep, changed=changed))

    @activity.defn(name=sweep_activity(Sweep.QUEUE_SNAPSHOT))
    async def queue_snapshot(self, request: RunSweepInput) -> SweepResult:
        """Every 5 minutes: one point per outbound queue (points past the retention are
        deleted), and a redrive of stranded work."""
        now = self._now(request)
        keep_after = now - timedelta(days=self._settings.queue_snapshot_retention_days)
        async with self._sessions() as session, session.begin():
            await session.exec(delete(QueueSnapshot).where(QueueSnapshot.at < keep_after))
            for queue, model in (("ledger", LedgerEntry), ("notifications", Notification)):
                pending, failed, oldest = await queue_backlog(session, model)
                age = max(0.0, (now - as_utc(oldest)).total_seconds()) if oldest else 0.0
                session.add(QueueSnapshot(at=now, queue=queue, pending=pending, failed=failed,
                                          oldest_pending_seconds=age))
                metrics.set_queue(queue, pending=pending, failed=failed, oldest_seconds=age)
            controllers = (await session.exec(
                select(LedgerEntry.controller).where(LedgerEntry.status == LedgerStatus.PENDING)
                .distinct())).all()
            notes = (await session.exec(select(Notification.id).where(
                Notification.status == NotificationStatus.PENDING).limit(1))).first()
        # A drain already running just gets a signal; one lost to a failed start restarts.
        await self._kicker.drains(controllers, notes is not None)
        return self._done(SweepResult(sweep=request.sweep, changed=2))

    @activity.defn(name=FIRE_TIMER_ACTIVITY)
    async def fire_timer(self, timer: TimerInput) -> TimerResult:
        """A per-entity timer is due: apply the same CAS-guarded expiry the sweeps apply."""
        at = utcnow()
        actor = f"timer:{timer.kind}"
        changed, controllers, notes = False, set(), 0
        async with self._sessions() as session, session.begin():
            if timer.kind is TimerKind.READY:
                done = await revert_ready(session, student_id=timer.entity_id,
                                          version=timer.version, at=at, actor=actor)
                if done is not None:
                    changed, controllers, notes = True, done.controllers, done.notifications
            elif timer.kind is TimerKind.ARRIVAL:
                done = await expire_arrival(session, arrival_id=timer.entity_id, at=at,
                                            actor=actor)
                changed = done is not None
            elif timer.kind is TimerKind.EARLY_RELEASE:
                batch = await expire_early_releases(session, now=timer.deadline, at=at,
                                                    actor=actor, limit=1, ids=[timer.entity_id])
                changed = batch.changed > 0
            else:
                # "Expired as of the deadline": a later valid_until (extended) is left alone.
                batch = await expire_persons(session, now=timer.deadline, at=at, actor=actor,
                                             limit=1, ids=[timer.entity_id])
                changed, controllers = batch.changed > 0, batch.controllers
        await self._kicker.drains(controllers, notes > 0)
        metrics.TIMERS_FIRED.labels(timer.kind, str(changed).lower()).inc()
        return TimerResult(kind=timer.kind, entity_id=timer.entity_id, changed=changed)

    def all(self) -> list:
        """Every activity of this class, for the worker."""
        return [self.expire_authorizations, self.expire_early_releases, self.delete_expired_links,
                self.close_arrivals, self.revert_ready, self.prune_tokens, self.queue_snapshot,
                self.fire_timer]

