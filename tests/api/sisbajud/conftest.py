"""The webhook gateway on the test's store, driven in process; the Mensageria on loopback."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
import pytest_asyncio
from sqlalchemy.ext.asyncio import async_sessionmaker

from activities.sisbajud.operator import SisbajudOperations
from services.simulators.mensageria import create_app as mensageria_app
from services.webhook_gateway.app import GatewayDeps, create_app
from services.webhook_gateway.signature import StandardWebhooksV1
from shared.db.engine import create_engine, session_factory
from shared.settings import Settings
from shared.temporal import TemporalHandle
from tests.support.sisbajud import serve

SECRET = "whsec_" + base64.b64encode(b"current gateway secret, 32 bytes").decode()
OLD_SECRET = "whsec_" + base64.b64encode(b"previous gateway secret 32 bytes").decode()
MAX_SKEW_S = 300
FETCH_TIMEOUT_S = 0.5


class MensageriaSim:
    """The Mensageria simulator served by uvicorn on a loopback port, and its `/_sim` knobs."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._http = httpx.Client(base_url=url, timeout=10)

    def reset(self) -> None:
        """Forget orders, withdrawals, results and faults."""
        self._http.post("/_sim/reset").raise_for_status()

    def order(self, order_id: str, revision: int = 1, **fields: Any) -> None:
        """Serve an executable BLOQUEIO order."""
        body = {"orderId": order_id, "revision": revision, "operation": "BLOQUEIO",
                "institutionId": "BANK1", "subject": {"document": "12345678900"},
                "amount": "10", **fields}
        self._http.post("/_sim/orders", json=body).raise_for_status()

    def withdraw(self, order_id: str, status: int) -> None:
        """From now on the order answers `status` (404 or 410)."""
        self._http.post(f"/_sim/orders/{order_id}/withdraw",
                        json={"status": status}).raise_for_status()

    def fault(self, **rule: Any) -> None:
        """Queue a fault rule on `GET …/orders/{id}` (see the simulator's `Fault`)."""
        self._http.post("/_sim/faults", json={"route": "orders.get", **rule}).raise_for_status()

    def faults(self) -> list[dict[str, Any]]:
        """Fault rules not yet consumed."""
        return self._http.get("/_sim/faults").json()

    def close(self) -> None:
        """Release the knob client."""
        self._http.close()


@pytest.fixture(scope="session")
def mensageria_server() -> Iterator[MensageriaSim]:
    """One simulator for the session (uvicorn in a thread; each test resets it)."""
    with serve(mensageria_app()) as url:
        sim = MensageriaSim(url)
        try:
            yield sim
        finally:
            sim.close()


@pytest.fixture
def mensageria(mensageria_server: MensageriaSim) -> MensageriaSim:
    """The session's simulator, emptied for this test."""
    mensageria_server.reset()
    return mensageria_server


async def no_temporal():
    """The gateway's Temporal: never asked for a client."""
    raise AssertionError("the gateway never asks Temporal")


def face_for(settings: Settings, sessions: async_sessionmaker,
             http: httpx.AsyncClient) -> SisbajudOperations:
    """The gateway's SISBAJUD face as `esteira webhook` composes it, on `http`."""
    return SisbajudOperations(settings, sessions, TemporalHandle(no_temporal), http=http)


def on_mensageria(settings: Settings, url: str) -> Settings:
    """`settings` pointing the executor at the Mensageria at `url`, with a short fetch."""
    sis = settings.sisbajud.model_copy(update={
        "mensageria_url": url, "webhook_fetch_timeout_seconds": FETCH_TIMEOUT_S})
    return settings.model_copy(update={"sisbajud": sis})


@pytest_asyncio.fixture
async def sessions(settings):
    """Sessions on the test's migrated store."""
    engine = create_engine(settings.sqlalchemy_url)
    try:
        yield session_factory(engine)
    finally:
        await engine.dispose()


@pytest_asyncio.fixture
async def face(settings, sessions, mensageria) -> AsyncIterator[SisbajudOperations]:
    """The face on the test's store, fetching from the loopback simulator over real HTTP."""
    async with httpx.AsyncClient(timeout=FETCH_TIMEOUT_S) as http:
        yield face_for(on_mensageria(settings, mensageria.url), sessions, http)


def gateway_client(face: SisbajudOperations,
                   secrets=(SECRET, OLD_SECRET)) -> httpx.AsyncClient:
    """An HTTP client on a gateway that accepts `secrets` (the current one first)."""
    scheme = StandardWebhooksV1(list(secrets), max_skew_s=MAX_SKEW_S)
    app = create_app(GatewayDeps(scheme, face))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway")


def world_gateway(world) -> httpx.AsyncClient:
    """A gateway on a `tests.support.sisbajud.World`: its store and in-process Mensageria."""
    return gateway_client(face_for(world.settings, world.sessions, world.http))


@pytest_asyncio.fixture
async def gateway(face) -> AsyncIterator[httpx.AsyncClient]:
    """The gateway with the current and the previous secret configured."""
    async with gateway_client(face) as client:
        yield client
