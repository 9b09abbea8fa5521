"""Simulators served by real uvicorn on ephemeral ports, driven over real sockets."""

from __future__ import annotations

import base64
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from services.simulators.hub.__main__ import main as hub_cli
from services.simulators.mensageria import create_app as mensageria_app
from services.simulators.midaz import create_app as midaz_app
from services.webhook_gateway.signature import StandardWebhooksV1

SECRET = "whsec_" + base64.b64encode(b"uvicorn test secret 24b!").decode()


@contextmanager
def serve(app: FastAPI) -> Iterator[str]:
    """Run `app` on 127.0.0.1 with an OS-chosen port; yield its base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def test_midaz_lost_response_times_the_client_out_and_the_retry_replays():
    with (
        serve(midaz_app(tokens=["t"])) as url,
        httpx.Client(base_url=url, headers={"Authorization": "Bearer t"}) as http,
    ):
        ids = http.post("/_sim/bootstrap", json={}).json()
        base = f"/v1/organizations/{ids['organizationId']}/ledgers/{ids['ledgerId']}"
        for alias, amount in (("@cc-1", "100"), ("@block_sisbajud_ab", "0")):
            http.post("/_sim/accounts", json={**ids, "alias": alias, "available": amount})
        http.post("/_sim/faults", json={"kind": "timeout_after_write", "delay_s": 2})
        body = {
            "send": {
                "asset": "BRL",
                "value": "10",
                "source": {
                    "from": [{"accountAlias": "@cc-1", "amount": {"asset": "BRL", "value": "10"}}]
                },
                "distribute": {
                    "to": [
                        {
                            "accountAlias": "@block_sisbajud_ab",
                            "amount": {"asset": "BRL", "value": "10"},
                        }
                    ]
                },
            }
        }
        headers = {"X-Idempotency": "o:1", "X-TTL": "604800"}
        with pytest.raises(httpx.ReadTimeout):
            http.post(f"{base}/transactions/block", json=body, headers=headers, timeout=0.3)
        retry = http.post(f"{base}/transactions/block", json=body, headers=headers)
        assert retry.status_code == 201 and retry.headers["X-Idempotency-Replayed"] == "true"
        items = http.get(f"{base}/accounts/alias/@cc-1/balances").json()["items"]
        assert items[0]["available"] == "90"


def test_mensageria_serves_orders_and_records_results_over_http():
    with (
        serve(mensageria_app()) as url,
        httpx.Client(base_url=url, headers={"Authorization": "Bearer m2m"}) as http,
    ):
        http.post("/_sim/orders", json={"orderId": "o1", "revision": 2})
        assert http.get("/v1/sisbajud/execution/orders/o1").json()["revision"] == 2
        posted = http.post(
            "/v1/sisbajud/execution/orders/o1/execution-results",
            json={"executionState": "ACCEPTED", "effect": "NONE"},
            headers={"X-Idempotency": "o1:2:1"},
        )
        assert posted.status_code == 201
        assert http.get("/_sim/results").json()["keys"] == ["o1:2:1"]


def test_hub_cli_delivers_a_verifiable_notice(capsys):
    app = FastAPI()
    verdicts = []

    @app.post("/hook")
    async def hook(request: Request) -> JSONResponse:
        verdicts.append(StandardWebhooksV1([SECRET]).verify(request.headers, await request.body()))
        return JSONResponse({"ok": True})

    with serve(app) as url:
        code = hub_cli(
            [
                f"{url}/hook",
                "--secret",
                SECRET,
                "--order-id",
                "o1",
                "--revision",
                "5",
                "--msg-id",
                "msg_cli",
            ]
        )
    assert code == 0 and verdicts[0].valid and verdicts[0].message_id == "msg_cli"
    assert capsys.readouterr().out.startswith("200")
