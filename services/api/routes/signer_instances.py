"""The cluster's instances: list them, stand one down, resume it."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter

from activities.signer.operator import instances
from services.api.routes.signer import ActorDep
from services.app_context import ContextDep
from shared.db.models import as_utc

router = APIRouter(prefix="/api", tags=["signer"])


@router.get("/instances")
async def list_instances(ctx: ContextDep) -> dict:
    """Every instance Live / Stopped / No signal, which one answered, the mixed-versions alarm."""
    cluster = await instances.list_instances(ctx.sessions, ctx.settings)
    alarm = ({"code": "cluster.version-mix",
              "message": f"Mixed versions across live instances: {', '.join(cluster.version_mix)}"}
             if cluster.version_mix else None)
    return {"clusterEnabled": cluster.enabled, "instance": cluster.me,
            "staleAfterSeconds": cluster.stale_after_seconds, "versionMix": alarm,
            "instances": [instance_row(view) for view in cluster.instances]}


@router.post("/instances/{name}/stand-down")
async def stand_down(ctx: ContextDep, actor: ActorDep, name: str) -> dict:
    """The instance claims no new job; what it holds runs to the end (idempotent)."""
    return instance_row(await instances.set_stood_down(ctx.sessions, ctx.settings, name,
                                                       stood_down=True, actor=actor))


@router.post("/instances/{name}/resume")
async def resume(ctx: ContextDep, actor: ActorDep, name: str) -> dict:
    """The instance claims jobs again (idempotent)."""
    return instance_row(await instances.set_stood_down(ctx.sessions, ctx.settings, name,
                                                       stood_down=False, actor=actor))


def instance_row(view: instances.InstanceView) -> dict:
    """A row of `GET /api/instances`."""
    return {"name": view.name, "state": view.state.value, "versions": view.versions,
            "lastSeenAt": _ts(view.last_seen_at), "stoodDown": view.stood_down,
            "changedBy": view.changed_by, "changedAt": _ts(view.changed_at),
            "processes": [{"id": p.instance_id, "role": p.role, "host": p.host, "pid": p.pid,
                           "version": p.version, "state": p.state,
                           "lastSeenAt": _ts(p.last_seen_at)} for p in view.processes]}


def _ts(moment: datetime | None) -> str | None:
    return as_utc(moment).isoformat() if moment else None
