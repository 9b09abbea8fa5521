"""The REST app with the pickup routes on a real store and the session's Temporal server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import pytest_asyncio

from services.app import create_app
from services.app_context import ApiContext
from shared.db.engine import create_engine
from shared.temporal import TemporalHandle
from tests.support.pickup import API_KEY, Seed, pickup_settings


@dataclass
class PickupApi:
    """An app, a client with the API key, and direct access to the rows."""

    app: object
    http: httpx.AsyncClient
    seed: Seed
    context: ApiContext

    async def ok(self, method: str, path: str, **kwargs) -> dict:
        response = await self.http.request(method, path, **kwargs)
        assert response.is_success, response.text
        return response.json()


@pytest_asyncio.fixture
async def pickup_api(tmp_path, database_url: str, temporal_env) -> AsyncIterator[PickupApi]:
    settings = pickup_settings(tmp_path, database_url)
    engine = create_engine(settings.sqlalchemy_url)

    async def client():
        return temporal_env.client

    context = ApiContext.build(settings, engine, api_key=API_KEY,
                         temporal=TemporalHandle(client))
    app = create_app(context)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://esteira",
                                 headers={"X-API-Key": API_KEY}) as http:
        yield PickupApi(app, http, Seed(context.sessions), context)
    await engine.dispose()
