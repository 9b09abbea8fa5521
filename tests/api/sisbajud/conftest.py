"""The webhook gateway on the test's store, driven in process."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator

import httpx
import pytest_asyncio

from services.webhook_gateway.app import GatewayDeps, create_app
from services.webhook_gateway.signature import StandardWebhooksV1
from shared.db.engine import create_engine, session_factory

SECRET = "whsec_" + base64.b64encode(b"current gateway secret, 32 bytes").decode()
OLD_SECRET = "whsec_" + base64.b64encode(b"previous gateway secret 32 bytes").decode()
MAX_SKEW_S = 300


@pytest_asyncio.fixture
async def sessions(settings):
    """Sessions on the test's migrated store."""
    engine = create_engine(settings.sqlalchemy_url)
    try:
        yield session_factory(engine)
    finally:
        await engine.dispose()


def gateway_client(sessions, secrets=(SECRET, OLD_SECRET)) -> httpx.AsyncClient:
    """An HTTP client on a gateway that accepts `secrets` (the current one first)."""
    scheme = StandardWebhooksV1(list(secrets), max_skew_s=MAX_SKEW_S)
    app = create_app(GatewayDeps(scheme, sessions))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway")


@pytest_asyncio.fixture
async def gateway(sessions) -> AsyncIterator[httpx.AsyncClient]:
    """The gateway with the current and the previous secret configured."""
    async with gateway_client(sessions) as client:
        yield client
