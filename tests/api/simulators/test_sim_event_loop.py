"""The simulators answer the executor's calls on their event loop, with no hop to a thread.

They share the CPU with what they are benchmarked against; a synchronous FastAPI dependency
costs a thread-pool round trip per request, and each request has several.
"""

from __future__ import annotations

import pytest
import starlette.concurrency

from services.simulators.mensageria import create_app as mensageria_app
from services.simulators.midaz import create_app as midaz_app
from services.simulators.midaz.testkit import bootstrap, client, seed_account, send


@pytest.fixture
def thread_hops(monkeypatch) -> list[str]:
    """The name of every function FastAPI hands to its thread pool while the test runs."""
    hops: list[str] = []
    to_thread = starlette.concurrency.run_in_threadpool

    async def counted(func, *args, **kwargs):
        hops.append(getattr(func, "__name__", repr(func)))
        return await to_thread(func, *args, **kwargs)

    for module in ("fastapi.dependencies.utils", "fastapi.routing"):
        monkeypatch.setattr(f"{module}.run_in_threadpool", counted)
    return hops


async def test_the_midaz_calls_of_an_order_run_on_the_event_loop(thread_hops):
    async with client(midaz_app()) as http:
        ref = await bootstrap(http)
        source = await seed_account(http, ref, "@source", available="100.00")
        await seed_account(http, ref, "@block_sisbajud_1")
        thread_hops.clear()  # the /_sim set-up routes are synchronous, and not on the path

        assert (await http.get(f"{ref.base}/accounts/{source['id']}")).status_code == 200
        balances = await http.get(f"{ref.base}/accounts/alias/@source/balances")
        assert balances.status_code == 200
        posted = await http.post(f"{ref.base}/transactions/json",
                                 json=send({"@source": "10.00"}, {"@block_sisbajud_1": "10.00"}))
        assert posted.status_code == 201, posted.text
        operations = await http.get(f"{ref.base}/accounts/{source['id']}/operations")
        assert [op["accountAlias"] for op in operations.json()["items"]] == ["@source"]

    assert thread_hops == []


async def test_the_mensageria_calls_of_an_order_run_on_the_event_loop(thread_hops):
    order = {"orderId": "0190a1b2c3d4e5f60718293a4b5c6d7e", "revision": 1,
             "operation": "BLOQUEIO", "amount": "10.00", "subject": {"document": "12345678900"}}
    app = mensageria_app()
    async with client(app) as http:
        assert (await http.post("/_sim/orders", json=order)).status_code == 201
        thread_hops.clear()

        fetched = await http.get(f"/v1/sisbajud/execution/orders/{order['orderId']}")
        assert fetched.status_code == 200

    assert thread_hops == []
