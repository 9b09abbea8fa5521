"""The cluster's instances: Live / Stopped / No signal, an operator's stand down / resume, and
the processes each one runs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy import func, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.contracts.jobs import SignerErrorCode
from activities.signer.operator.errors import refuse
from shared.db.engine import Sessions
from shared.db.models import Instance, InstanceControl, OperationalEvent, as_utc, utcnow
from shared.instances import cluster_instance_name, read_stood_down
from shared.settings import Settings

# The code of the alarm raised while live instances run different versions.
VERSION_MIX = "cluster.version-mix"


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

    # The alarm's code.
    version_mix_code = VERSION_MIX

    @property
    def version_alarm(self) -> str | None:
        """The mixed-versions alarm (code `VERSION_MIX`), or None while versions agree."""
        if not self.version_mix:
            return None
        return f"Mixed versions across live instances: {', '.join(self.version_mix)}"


@dataclass(frozen=True)
class Processes:
    """Every process row (by role and id) and when a process last stopped cleanly."""

    rows: list[Instance]
    last_shutdown: datetime | None


class SignerInstances:
    """The cluster's instances as the heartbeat table shows them; stand-down and resume."""

    def __init__(self, settings: Settings, sessions: Sessions) -> None:
        self._settings = settings
        self._sessions = sessions

    @property
    def me(self) -> str:
        """This instance's name."""
        return cluster_instance_name(self._settings.cluster)

    async def cluster(self, *, now: datetime | None = None) -> ClusterView:
        """Each instance classified against `Cluster:StaleAfterSeconds` at `now` (default: now)."""
        now = now or utcnow()
        settings = self._settings
        stale = settings.cluster.stale_after_seconds
        async with self._sessions() as session:
            rows = (await session.exec(select(Instance))).all()
            controls = {c.name: c for c in (await session.exec(select(InstanceControl))).all()}
        grouped: dict[str, list[Instance]] = {}
        for row in rows:
            grouped.setdefault(row.instance_name or row.host, []).append(row)
        views = [_view(name, procs, controls.get(name), now, stale)
                 for name, procs in sorted(grouped.items())]
        live = {v for view in views if view.state is InstanceState.LIVE for v in view.versions}
        return ClusterView(settings.cluster.enabled, self.me, stale, views,
                           sorted(live) if len(live) > 1 else [])

    async def view(self, name: str) -> InstanceView:
        """One instance as the listing shows it."""
        cluster = await self.cluster()
        [view] = [v for v in cluster.instances if v.name == name]
        return view

    async def processes(self) -> Processes:
        """Every process row, and the last clean shutdown."""
        async with self._sessions() as session:
            rows = (await session.exec(select(Instance).order_by(Instance.role,
                                                                 Instance.instance_id))).all()
            last = (await session.exec(select(func.max(Instance.stopped_at)))).one()
        return Processes(list(rows), last)

    async def stand_down(self, name: str, *, actor: str) -> InstanceView:
        """The instance claims no new job; what it holds runs to the end (idempotent)."""
        return await self._set_stood_down(name, stood_down=True, actor=actor)

    async def resume(self, name: str, *, actor: str) -> InstanceView:
        """The instance claims jobs again (idempotent)."""
        return await self._set_stood_down(name, stood_down=False, actor=actor)

    async def _set_stood_down(self, name: str, *, stood_down: bool, actor: str) -> InstanceView:
        """Asking for the state it is in already changes nothing and records no event."""
        if not self._settings.cluster.enabled:
            raise refuse(SignerErrorCode.INSTANCE_CLUSTER_DISABLED,
                         "Standing an instance down needs Cluster:Enabled = true; a single "
                         "instance is held with POST /api/pipeline/pause.")
        async with self._sessions() as session:
            known = (await session.exec(select(Instance.instance_id).where(
                Instance.instance_name == name).limit(1))).first()
            if known is None:
                raise refuse(SignerErrorCode.INSTANCE_NOT_FOUND,
                             f"No instance named '{name}' has ever registered.")
            if await read_stood_down(session, name) != stood_down \
                    and await _flip(session, name, stood_down=stood_down, actor=actor):
                session.add(_event(name, stood_down, actor))
                await session.commit()
        return await self.view(name)

    async def readiness_check(self) -> tuple[bool, str]:
        """The `cluster-instance` readiness line (cluster mode): this instance's state."""
        me = self.me
        async with self._sessions() as session:
            control = await session.get(InstanceControl, me)
        if control is not None and control.stood_down:
            return False, (f"{me} stood down by {control.changed_by} at "
                           f"{as_utc(control.changed_at):%Y-%m-%d %H:%M:%S}Z: it claims no new "
                           f"job; POST /api/instances/{me}/resume to resume")
        return True, f"{me} claiming jobs"


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
