"""The cluster's instances: list them, stand one down, resume it."""

from __future__ import annotations

from fastapi import APIRouter

from activities.signer.operator import ClusterView, InstanceView
from services.api.routes.signer import ActorDep
from services.api.routes.signer_schemas import iso
from services.app_context import SignerFace
from shared.db.models import Instance
from shared.wire import WireModel

router = APIRouter(prefix="/api", tags=["signer"])


class ProcessOut(WireModel):
    """One process of an instance (api, worker, watcher, …) and its last heartbeat."""

    id: str
    role: str
    host: str
    pid: int
    version: str
    state: str
    last_seen_at: str | None

    @classmethod
    def of(cls, row: Instance) -> ProcessOut:
        """A heartbeat row."""
        return cls(id=row.instance_id, role=row.role, host=row.host, pid=row.pid,
                   version=row.version, state=row.state, last_seen_at=iso(row.last_seen_at))


class InstanceRow(WireModel):
    """A row of `GET /api/instances`."""

    name: str
    state: str
    versions: list[str]
    last_seen_at: str | None
    stood_down: bool
    changed_by: str | None
    changed_at: str | None
    processes: list[ProcessOut]

    @classmethod
    def of(cls, view: InstanceView) -> InstanceRow:
        """One instance, its processes folded in."""
        return cls(name=view.name, state=view.state.value, versions=view.versions,
                   last_seen_at=iso(view.last_seen_at), stood_down=view.stood_down,
                   changed_by=view.changed_by, changed_at=iso(view.changed_at),
                   processes=[ProcessOut.of(p) for p in view.processes])


class VersionMix(WireModel):
    """The alarm raised while live instances run different versions."""

    code: str
    message: str


class Cluster(WireModel):
    """`GET /api/instances`: every instance, which one answered, the mixed-versions alarm."""

    cluster_enabled: bool
    instance: str
    stale_after_seconds: int
    version_mix: VersionMix | None
    instances: list[InstanceRow]

    @classmethod
    def of(cls, cluster: ClusterView) -> Cluster:
        """The cluster as this instance sees it."""
        alarm = VersionMix(code=cluster.version_mix_code, message=cluster.version_alarm) \
            if cluster.version_alarm else None
        return cls(cluster_enabled=cluster.enabled, instance=cluster.me,
                   stale_after_seconds=cluster.stale_after_seconds, version_mix=alarm,
                   instances=[InstanceRow.of(view) for view in cluster.instances])


@router.get("/instances", response_model=Cluster)
async def list_instances(signer: SignerFace) -> Cluster:
    """Every instance Live / Stopped / No signal, which one answered, the mixed-versions alarm."""
    return Cluster.of(await signer.instances.cluster())


@router.post("/instances/{name}/stand-down", response_model=InstanceRow)
async def stand_down(signer: SignerFace, actor: ActorDep, name: str) -> InstanceRow:
    """The instance claims no new job; what it holds runs to the end (idempotent)."""
    return InstanceRow.of(await signer.instances.stand_down(name, actor=actor))


@router.post("/instances/{name}/resume", response_model=InstanceRow)
async def resume(signer: SignerFace, actor: ActorDep, name: str) -> InstanceRow:
    """The instance claims jobs again (idempotent)."""
    return InstanceRow.of(await signer.instances.resume(name, actor=actor))
