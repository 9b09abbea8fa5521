"""`esteira_http_responses_total`: each answer counted once by status class, an escaped
exception as a 5xx (the 5xx-rate alert reads it)."""

from __future__ import annotations

import httpx
from fastapi import FastAPI
from fastapi.responses import JSONResponse

from shared.http_metrics import RESPONSES, ResponseCounter


def _count(service: str, code: str) -> float:
    return RESPONSES.labels(service, code)._value.get()


def _app() -> FastAPI:
    app = FastAPI()

    @app.get("/ok")
    async def ok() -> dict:
        return {}

    @app.get("/refused")
    async def refused() -> JSONResponse:
        return JSONResponse({}, status_code=409)

    @app.get("/broken")
    async def broken() -> dict:
        raise RuntimeError("boom")

    app.add_middleware(ResponseCounter, service="unit")
    return app


async def test_each_answer_is_counted_by_its_status_class():
    before = {code: _count("unit", code) for code in ("2xx", "4xx", "5xx")}
    transport = httpx.ASGITransport(app=_app(), raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://unit") as http:
        assert (await http.get("/ok")).status_code == 200
        assert (await http.get("/refused")).status_code == 409
        assert (await http.get("/nowhere")).status_code == 404
        assert (await http.get("/broken")).status_code == 500
    assert _count("unit", "2xx") - before["2xx"] == 1
    assert _count("unit", "4xx") - before["4xx"] == 2
    assert _count("unit", "5xx") - before["5xx"] == 1, "an exception that escaped is a 5xx"


async def test_a_readiness_verdict_is_not_a_server_error():
    app = FastAPI()

    @app.get("/api/ready")
    async def ready() -> JSONResponse:
        return JSONResponse({"status": "NotReady"}, status_code=503)

    app.add_middleware(ResponseCounter, service="verdict", verdicts=("/api/ready",))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://unit") as http:
        assert (await http.get("/api/ready")).status_code == 503
    assert _count("verdict", "5xx") == 0
