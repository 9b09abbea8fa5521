"""Simulators served by real uvicorn on ephemeral ports, driven over real sockets."""

from __future__ import annotations

import base64

import httpx
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from services.simulators.hub.__main__ import main as hub_cli
from services.simulators.mensageria import create_app as mensageria_app
from services.simulators.midaz import create_app as midaz_app
from services.simulators.oauth import IssuedBearer
from services.webhook_gateway.signature import StandardWebhooksV1
from tests.support.sisbajud import serve

SECRET = "whsec_" + base64.b64encode(b"uvicorn test secret 24b!").decode()


def test_midaz_lost_response_times_the_client_out_and_the_retry_replays():
    with (
        serve(app := midaz_app()) as url,
        httpx.Client(base_url=url, auth=IssuedBearer(app)) as http,
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
        serve(app := mensageria_app()) as url,
        httpx.Client(base_url=url, auth=IssuedBearer(app)) as http,
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
