"""An in-process SISBAJUD world for tests: Midaz and Mensageria simulators, worker helpers."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from decimal import Decimal
from typing import Any, TypeVar

import httpx
import uvicorn
from fastapi import FastAPI
from sqlmodel import SQLModel, select
from temporalio.client import Client, WorkflowHandle
from temporalio.common import WorkflowIDReusePolicy
from temporalio.service import RPCError
from temporalio.worker import Worker

from activities.sisbajud.contracts.orders import (
    ORDER_WORKFLOW,
    TICK_WORKFLOW,
    NoticeSignal,
    OrderRunResult,
    RunOrderInput,
    TickResult,
    order_workflow_id,
)
from activities.sisbajud.models import SisbajudOrder
from activities.sisbajud.setup import activities, order_options, tick_input
from services.simulators.mensageria import create_app as mensageria_app
from services.simulators.midaz import create_app as midaz_app
from services.simulators.midaz.testkit import LedgerRef
from services.simulators.oauth import IssuedBearer
from shared.db.engine import create_engine, session_factory
from shared.settings import InstitutionSettings, Settings, SisbajudSettings
from workflows.sisbajud.order import SisbajudOrderWorkflow
from workflows.sisbajud.tick import SisbajudTickWorkflow, stage_task_queue

MIDAZ = "http://midaz.test"
MENSAGERIA = "http://mensageria.test"
ORG = "0190b000-0000-7000-8000-0000000000a1"
LEDGER = "0190b000-0000-7000-8000-0000000000a2"
INSTITUTION = "BANK1"
DOCUMENT = "12345678900"
Row = TypeVar("Row", bound=SQLModel)


def sisbajud_settings(settings: Settings, task_queue: str, **overrides: Any) -> Settings:
    """`settings` with an institution on the Midaz simulator and short waits."""
    sis = SisbajudSettings(
        institutions=[InstitutionSettings(id=INSTITUTION, base_url=MIDAZ,
                                          organization_id=ORG, ledger_id=LEDGER)],
        mensageria_url=MENSAGERIA, task_queue=task_queue,
        fetch_retry_initial_seconds=0.1, fetch_retry_max_seconds=0.5,
        write_heartbeat_timeout_seconds=3, parent_poll_seconds=0.5,
        outbox_retry_initial_seconds=0.01, outbox_retry_max_seconds=0.05, **overrides)
    return settings.model_copy(update={"sisbajud": sis})


def new_order_id() -> str:
    """A fresh order id (a UUID, as block account aliases need)."""
    return str(uuid.uuid4())


class World:
    """Simulators reachable from activities through one mounted httpx client."""

    def __init__(self, settings: Settings, *, apps: tuple[FastAPI, FastAPI] | None = None,
                 http_timeout: float = 5.0) -> None:
        self.settings = settings
        self.midaz_app, self.mensageria_app = apps or (midaz_app(), mensageria_app())
        self.http = httpx.AsyncClient(timeout=http_timeout, mounts={
            MIDAZ: httpx.ASGITransport(self.midaz_app),
            MENSAGERIA: httpx.ASGITransport(self.mensageria_app)})
        # The test's own calls carry tokens the simulators issued, as the executor's do.
        self.midaz = httpx.AsyncClient(transport=httpx.ASGITransport(self.midaz_app),
                                       base_url=MIDAZ, auth=IssuedBearer(self.midaz_app))
        self.mensageria = httpx.AsyncClient(transport=httpx.ASGITransport(self.mensageria_app),
                                            base_url=MENSAGERIA,
                                            auth=IssuedBearer(self.mensageria_app))
        self.ledger = LedgerRef(ORG, LEDGER)
        self.engine = create_engine(settings.sqlalchemy_url)
        self.sessions = session_factory(self.engine)
        self.handles: list[WorkflowHandle] = []

    async def start(self) -> World:
        (await self.midaz.post("/_sim/bootstrap", json={"organizationId": ORG,
                                                        "ledgerId": LEDGER})).raise_for_status()
        return self

    async def close(self) -> None:
        for handle in self.handles:  # orders left waiting for a person or a proof
            with contextlib.suppress(RPCError):
                await handle.terminate("test over")
        for client in (self.http, self.midaz, self.mensageria):
            await client.aclose()
        await self.engine.dispose()

    async def account(self, alias: str, available: str = "0", *, document: str = DOCUMENT,
                      kind: str = "CACC", branch: str = "0001", number: str | None = None,
                      **fields: Any) -> dict[str, Any]:
        """A subject's account in the ledger and its CRM record."""
        response = await self.midaz.post("/_sim/accounts", json={
            "organizationId": ORG, "ledgerId": LEDGER, "alias": alias, "available": available,
            **fields})
        response.raise_for_status()
        account = response.json()["account"]
        await self.midaz.post("/_sim/crm/instruments", json={
            "organizationId": ORG, "ledgerId": LEDGER, "document": document,
            "accountId": account["id"],
            "bankingDetails": {"branch": branch, "account": number or alias, "type": kind}})
        return account

    async def balance(self, alias: str) -> Decimal:
        """`available` of an alias's default balance (0 for an unknown alias)."""
        response = await self.midaz.get(
            f"{self.ledger.base}/accounts/alias/{alias}/balances")
        items = response.json()["items"]
        return Decimal(items[0]["available"]) if items else Decimal(0)

    async def order(self, order_id: str, operation: str = "BLOQUEIO", amount: str = "100",
                    revision: int = 1, **fields: Any) -> dict[str, Any]:
        """Seed an order into the Mensageria simulator."""
        body = {"orderId": order_id, "revision": revision, "operation": operation,
                "institutionId": INSTITUTION, "subject": {"document": DOCUMENT},
                "amount": amount, **fields}
        (await self.mensageria.post("/_sim/orders", json=body)).raise_for_status()
        return body

    async def transactions(self) -> list[dict[str, Any]]:
        """Every transaction the Midaz simulator posted."""
        return (await self.midaz.get("/_sim/transactions")).json()

    async def results(self, order_id: str | None = None) -> dict[str, Any]:
        """What the Mensageria simulator received."""
        params = {"orderId": order_id} if order_id else {}
        return (await self.mensageria.get("/_sim/results", params=params)).json()

    @contextlib.asynccontextmanager
    async def worker(self, client: Client) -> AsyncIterator[Worker]:
        """A worker on the settings' queue with every real activity."""

        async def temporal() -> Client:
            return client

        every = activities(self.settings, self.sessions, self.http, temporal)
        queue = self.settings.sisbajud.task_queue
        async with Worker(client, task_queue=queue,
                          workflows=[SisbajudOrderWorkflow, SisbajudTickWorkflow],
                          activities=every) as worker, \
                Worker(client, task_queue=stage_task_queue(queue), activities=every):
            yield worker

    async def start_order(self, client: Client, order_id: str, revision: int = 1
                          ) -> WorkflowHandle:
        """Signal-with-start the order's workflow (the run is terminated at `close`)."""
        handle = await client.start_workflow(
            ORDER_WORKFLOW, RunOrderInput(order_id=order_id,
                                          options=order_options(self.settings)),
            id=order_workflow_id(order_id), task_queue=self.settings.sisbajud.task_queue,
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE, start_signal="notice",
            start_signal_args=[NoticeSignal(revision=revision)], result_type=OrderRunResult)
        self.handles.append(handle)
        return handle

    async def execute(self, client: Client, order_id: str, revision: int = 1
                      ) -> OrderRunResult:
        """Signal-with-start the order's workflow and wait for that run to end."""
        return await (await self.start_order(client, order_id, revision)).result()

    async def until_state(self, order_id: str, state: str, timeout_s: float = 30
                          ) -> SisbajudOrder:
        """Poll the order's row until it reaches `state` (AssertionError after `timeout_s`)."""
        for _ in range(int(timeout_s / 0.05)):
            rows = await stored(self, SisbajudOrder, order_id=order_id, state=state)
            if rows:
                return rows[0]
            await asyncio.sleep(0.05)
        raise AssertionError(f"order {order_id} never reached {state}")

    async def hold(self, client: Client, order_id: str, state: str = "HUMAN_DECISION",
                   revision: int = 1) -> WorkflowHandle:
        """Start the order and return once its row shows `state` (the run keeps waiting)."""
        handle = await self.start_order(client, order_id, revision)
        await self.until_state(order_id, state)
        return handle

    async def tick(self, client: Client) -> TickResult:
        """Run one execution cycle now."""
        return await client.execute_workflow(
            TICK_WORKFLOW, tick_input(self.settings), id=f"tick-{uuid.uuid4()}",
            task_queue=self.settings.sisbajud.task_queue, result_type=TickResult)


async def stored(world: World, model: type[Row], **where: Any) -> list[Row]:
    """Rows of a table, filtered by equality on columns."""
    statement = select(model)
    for name, value in where.items():
        statement = statement.where(getattr(model, name) == value)
    async with world.sessions() as session:
        return list((await session.exec(statement)).all())


@contextlib.contextmanager
def serve(app: FastAPI) -> Iterator[str]:
    """Serve `app` with uvicorn on a loopback port in a thread; yield its base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    # A held request cut at shutdown is expected here; uvicorn would log it as an error.
    server = uvicorn.Server(uvicorn.Config(app, log_level="critical", lifespan="off",
                                           timeout_graceful_shutdown=1))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
