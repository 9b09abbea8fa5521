"""The REST app on a real store and a real Temporal server, driven in process."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest_asyncio
from temporalio.testing import WorkflowEnvironment

from activities.signer.health_reporter import ProfileHealthReporter
from services.app import create_app
from services.app_context import ApiContext
from services.bootstrap import bootstrap
from shared.db.engine import create_engine, session_factory
from shared.settings import Settings
from shared.temporal import TemporalHandle

API_KEY = "test-api-key-0123456789"


async def make_context(settings: Settings, temporal_env: WorkflowEnvironment) -> ApiContext:
    """An ApiContext on the test's bootstrapped database and the session's Temporal server.

    No worker runs here: readiness requires none (tests of worker readiness ask for it), and
    the profiles are checked once as a worker would, since the API only reads that finding.
    """
    await bootstrap(settings)
    settings.readiness.worker_domains = []
    settings.readiness.processes = []  # no watcher, gRPC or gateway runs in these tests
    engine = create_engine(settings.sqlalchemy_url)
    await ProfileHealthReporter(settings, session_factory(engine), "test-worker").report_once()

    async def client():
        return temporal_env.client

    return ApiContext.build(settings, engine, api_key=API_KEY,
                      temporal=TemporalHandle(client))


@pytest_asyncio.fixture
async def api(settings: Settings, temporal_env: WorkflowEnvironment
              ) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client on the app, without credentials."""
    context = await make_context(settings, temporal_env)
    transport = httpx.ASGITransport(app=create_app(context))
    async with httpx.AsyncClient(transport=transport, base_url="http://esteira") as client:
        client.context = context  # type: ignore[attr-defined]
        yield client
    await context.engine.dispose()
