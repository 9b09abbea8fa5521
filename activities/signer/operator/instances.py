"""The cluster's instances: Live / Stopped / No signal, and an operator's stand down / resume."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.operator.errors import refuse
from shared.contracts.signer import SignerErrorCode
from shared.db.models import Instance, InstanceControl, OperationalEvent, as_utc, utcnow
from shared.instances import cluster_instance_name, read_stood_down
from shared.settings import Settings


class InstanceState(StrEnum):
    """How an instance looks from its heartbeats (the seed's Viva / Parada / Sem sinal)."""

    LIVE = "Live"
    STOPPED = "Stopped"
    NO_SIGNAL = "No signal"


@dataclass(frozen=True)
class InstanceView:
    """One cluster instance: its processes' rows folded into one line."""

    name: str
    state: InstanceState
    versions: list[str]
    last_seen_at: datetime
    stood_down: bool
    changed_by: str | None
    changed_at: datetime | None
    processes: list[Instance]


@dataclass(frozen=True)
class ClusterView:
    """Every instance, which one answered, and the mixed-versions alarm (versions, or [])."""

    enabled: bool
    me: str
    stale_after_seconds: int
    instances: list[InstanceView]
    version_mix: list[str]


async def list_instances(sessions: async_sessionmaker[AsyncSession], settings: Settings, *,
                         now: datetime | None = None) -> ClusterView:
    """Each instance classified against `Cluster:StaleAfterSeconds` at `now` (default: now)."""
    now = now or utcnow()
    stale = settings.cluster.stale_after_seconds
    async with sessions() as session:
        rows = (await session.exec(select(Instance))).all()
        controls = {c.name: c for c in (await session.exec(select(InstanceControl))).all()}
    grouped: dict[str, list[Instance]] = {}
    for row in rows:
        grouped.setdefault(row.instance_name or row.host, []).append(row)
    views = [_view(name, procs, controls.get(name), now, stale)
             for name, procs in sorted(grouped.items())]
    live = {v for view in views if view.state is InstanceState.LIVE for v in view.versions}
    return ClusterView(settings.cluster.enabled, cluster_instance_name(settings.cluster), stale,
                       views, sorted(live) if len(live) > 1 else [])


def _view(name: str, processes: list[Instance], control: InstanceControl | None,
          now: datetime, stale: int) -> InstanceView:
    def fresh(row: Instance) -> bool:
        return row.state == "running" and (now - as_utc(row.last_seen_at)).total_seconds() <= stale

    live = [row for row in processes if fresh(row)]
    latest = max(processes, key=lambda row: as_utc(row.last_seen_at))
    if live:
        state = InstanceState.LIVE
    else:
        # The newest row says how the instance went quiet: retired cleanly, or silent.
        state = InstanceState.STOPPED if latest.state == "stopped" else InstanceState.NO_SIGNAL
    versions = sorted({row.version for row in (live or [latest])})
    stood_down = control is not None and control.stood_down
    return InstanceView(name, state, versions, as_utc(latest.last_seen_at), stood_down,
                        control.changed_by if control else None,
                        as_utc(control.changed_at) if control else None,
                        sorted(processes, key=lambda row: (row.role, row.instance_id)))


async def set_stood_down(sessions: async_sessionmaker[AsyncSession], settings: Settings,
                         name: str, *, stood_down: bool, actor: str) -> InstanceView:
    """Stand an instance down (it claims nothing new, finishes what it holds) or resume it.

    Idempotent: asking for the state it is in already changes nothing and records no event.
    """
    if not settings.cluster.enabled:
        raise refuse(SignerErrorCode.INSTANCE_CLUSTER_DISABLED,
                     "Standing an instance down needs Cluster:Enabled = true; a single "
                     "instance is held with POST /api/pipeline/pause.")
    async with sessions() as session:
        known = (await session.exec(select(Instance.instance_id).where(
            Instance.instance_name == name).limit(1))).first()
        if known is None:
            raise refuse(SignerErrorCode.INSTANCE_NOT_FOUND,
                         f"No instance named '{name}' has ever registered.")
        if await read_stood_down(session, name) != stood_down \
                and await _flip(session, name, stood_down=stood_down, actor=actor):
            session.add(_event(name, stood_down, actor))
            await session.commit()
    return await instance_view(sessions, settings, name)


async def _flip(session: AsyncSession, name: str, *, stood_down: bool, actor: str) -> bool:
    """Write the flag; False when a concurrent call made the same change first."""
    values = {"stood_down": stood_down, "changed_by": actor, "changed_at": utcnow()}
    try:
        if await session.get(InstanceControl, name) is None:
            session.add(InstanceControl(name=name, **values))
            await session.flush()
            return True
        result = await session.exec(update(InstanceControl).where(
            InstanceControl.name == name, InstanceControl.stood_down != stood_down
        ).values(**values))
        return result.rowcount == 1
    except IntegrityError:
        await session.rollback()
        return False


def _event(name: str, stood_down: bool, actor: str) -> OperationalEvent:
    if stood_down:
        return OperationalEvent(
            domain="signer", type="InstanceStoodDown", actor=actor,
            message=f"Instance {name} stood down by {actor}: it claims no new job; "
                    "what it holds runs to the end.", properties={"instance": name})
    return OperationalEvent(domain="signer", type="InstanceResumed", actor=actor,
                            message=f"Instance {name} resumed by {actor}: it claims jobs again.",
                            properties={"instance": name})


async def instance_view(sessions: async_sessionmaker[AsyncSession], settings: Settings,
                        name: str) -> InstanceView:
    """One instance as the listing shows it."""
    cluster = await list_instances(sessions, settings)
    [view] = [v for v in cluster.instances if v.name == name]
    return view


async def cluster_instance_check(sessions: async_sessionmaker[AsyncSession],
                                 settings: Settings) -> tuple[bool, str]:
    """The `cluster-instance` readiness line (cluster mode): this instance's name and state."""
    me = cluster_instance_name(settings.cluster)
    async with sessions() as session:
        control = await session.get(InstanceControl, me)
    if control is not None and control.stood_down:
        return False, (f"{me} stood down by {control.changed_by} at "
                       f"{as_utc(control.changed_at):%Y-%m-%d %H:%M:%S}Z: it claims no new "
                       f"job; POST /api/instances/{me}/resume to resume")
    return True, f"{me} claiming jobs"
