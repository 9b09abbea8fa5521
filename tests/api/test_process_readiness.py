"""/api/ready has a line for each process the deployment needs: a held-down one turns it red."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from sqlalchemy import update

from activities.signer.models.jobs import InputFolderState
from services.app import create_app
from services.readiness.processes import needed_processes
from shared.db.models import Instance, utcnow
from shared.instances import registered_instance
from shared.settings import Settings
from tests.api.conftest import make_context

SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"])
ROLES = ["watcher", "grpc", "webhook"]


@pytest.mark.parametrize(("domains", "needed"), [
    (["signer", "pickup", "sisbajud"], ["watcher", "webhook", "grpc"]),
    (["signer"], ["watcher", "grpc"]),
    (["pickup"], ["grpc"]),
    (["sisbajud"], ["webhook", "grpc"]),
    ([], []),
])
def test_the_processes_follow_the_domains_unless_configured(tmp_path, domains, needed):
    settings = Settings(data_dir=tmp_path, readiness={"worker_domains": domains})
    assert needed_processes(settings) == needed
    explicit = Settings(data_dir=tmp_path, readiness={"worker_domains": domains,
                                                      "processes": ["grpc"]})
    assert needed_processes(explicit) == ["grpc"]


async def _checks(app) -> tuple[int, dict[str, bool]]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://esteira") as api:
        answer = await api.get("/api/ready")
    return answer.status_code, {c["name"]: c["ok"] for c in answer.json()["checks"]}


@SQLITE_ONLY
async def test_each_needed_process_has_its_line_and_a_held_down_one_fails(settings,
                                                                          temporal_env):
    context = await make_context(settings, temporal_env)
    settings.readiness.processes = ROLES
    app = create_app(context)
    try:
        code, checks = await _checks(app)
        assert code == 503
        assert [checks[f"process:{role}"] for role in ROLES] == [False] * 3
        async with registered_instance(context.sessions, "watcher"), \
                registered_instance(context.sessions, "grpc"), \
                registered_instance(context.sessions, "webhook"):
            async with context.sessions() as session:  # the watcher's pass over its folder
                session.add(InputFolderState(name="inbox", status="Running",
                                             last_scan_at=utcnow()))
                await session.commit()
            code, checks = await _checks(app)
            assert code == 200, checks
            assert all(checks[f"process:{role}"] for role in ROLES)
            # The gateway stops beating (SIGSTOP, a hung loop): its row goes quiet.
            quiet = utcnow() - timedelta(seconds=settings.readiness.poller_stale_seconds + 5)
            async with context.sessions() as session:
                await session.exec(update(Instance).where(Instance.role == "webhook")
                                   .values(last_seen_at=quiet))
                await session.commit()
            code, checks = await _checks(app)
            assert code == 503
            assert checks["process:webhook"] is False
            assert checks["process:watcher"] and checks["process:grpc"]
        # Stopped cleanly: the rows say so, and the lines are red again.
        code, checks = await _checks(app)
        assert code == 503 and checks["process:watcher"] is False
    finally:
        await context.engine.dispose()
