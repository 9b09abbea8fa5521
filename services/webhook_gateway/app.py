"""The webhook gateway: verify, record, answer exactly as the seed's table says."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.requests import ClientDisconnect

from activities.sisbajud.contracts.errors import SisbajudErrorCode, WebhookErrorCode, sisbajud_error
from activities.sisbajud.operator import (
    Delivery,
    OrderUnavailable,
    SisbajudOperations,
    StoreUnavailable,
)
from services.webhook_gateway.body_limit import MAX_WEBHOOK_BODY, BodyTooLarge, read_request_body
from services.webhook_gateway.notice import ParsedNotice, parse_notice
from services.webhook_gateway.signature import SignatureScheme, Verdict
from shared import metrics
from shared.errors import ErrorCode, EsteiraError
from shared.http_metrics import ResponseCounter
from shared.logs import props
from shared.problem import refusal

WEBHOOK_PATH = "/webhooks/sisbajud"
# The Hub retries a 503; a hint keeps it from hammering a store that is down.
RETRY_AFTER_SECONDS = "5"
# How much of an odd webhook-timestamp a log line shows (a header may be kilobytes long).
SHOWN_TIMESTAMP = 64
log = logging.getLogger("esteira.webhook")


@dataclass(frozen=True)
class GatewayDeps:
    """What the gateway needs: a signature scheme and the SISBAJUD face (the store and the
    Mensageria behind it)."""

    scheme: SignatureScheme
    sisbajud: SisbajudOperations
    max_body: int = MAX_WEBHOOK_BODY


def create_app(deps: GatewayDeps) -> FastAPI:
    """Build the gateway around its dependencies (no I/O happens here)."""
    app = FastAPI(title="Esteira webhook gateway", docs_url=None, redoc_url=None,
                  openapi_url=None)
    app.state.deps = deps
    app.add_api_route(WEBHOOK_PATH, receive, methods=["POST"])
    app.add_api_route("/health", health, methods=["GET"])
    app.add_api_route("/metrics", prometheus_metrics, methods=["GET"])
    app.add_middleware(ResponseCounter, service="webhook")
    return app


async def receive(request: Request) -> Response:
    """One Hub delivery: 413, 401, 200 (accepted/duplicate/withdrawn/parked) or 503."""
    started = time.perf_counter()
    deps: GatewayDeps = request.app.state.deps
    response = await _handle(request, deps)
    deps.sisbajud.deliveries.count(response.status_code, time.perf_counter() - started)
    return response


async def _handle(request: Request, deps: GatewayDeps) -> Response:
    try:
        body = await read_request_body(request, deps.max_body)
    except BodyTooLarge:
        log.warning("Refused a delivery larger than %s bytes", deps.max_body)
        return refusal(sisbajud_error(WebhookErrorCode.NOTICE_TOO_LARGE,
                                      f"The body is larger than {deps.max_body} bytes."))
    except ClientDisconnect:
        return Response(status_code=400)
    verdict = deps.scheme.verify(request.headers, body)
    if not verdict.valid:
        log.warning("Refused delivery %s: %s", verdict.message_id, verdict.detail,
                    extra=props(WebhookId=verdict.message_id, Verdict=verdict.code))
        return refusal(sisbajud_error(WebhookErrorCode(verdict.code),
                                      "No signature on the delivery is valid."))
    if verdict.skewed and verdict.timestamp is None:
        log.warning("Delivery %s has webhook-timestamp %r, no Unix time: out of "
                    "EXECUTOR_HUB_WEBHOOK_MAX_SKEW_SEC; accepted", verdict.message_id,
                    (verdict.raw_timestamp or "")[:SHOWN_TIMESTAMP],
                    extra=props(WebhookId=verdict.message_id))
    elif verdict.skewed:
        log.warning("Delivery %s is %ss off the clock, beyond EXECUTOR_HUB_WEBHOOK_MAX_SKEW_SEC; "
                    "accepted", verdict.message_id, verdict.skew_s,
                    extra=props(WebhookId=verdict.message_id, SkewSeconds=verdict.skew_s))
    return await _record(deps, verdict, body)


async def _record(deps: GatewayDeps, verdict: Verdict, body: bytes) -> Response:
    notice = parse_notice(body)
    assert verdict.message_id is not None
    try:
        status = await deps.sisbajud.deliveries.accept(Delivery(
            webhook_id=verdict.message_id, order_id=notice.order_id, revision=notice.revision,
            unusable=notice.unusable, body=body, skew_s=verdict.skew_s, skewed=verdict.skewed,
            secret_index=verdict.secret_index))
    except StoreUnavailable as exc:
        return _store_down(verdict, exc)
    except OrderUnavailable as exc:
        log.warning("Delivery %s: order %s could not be fetched: %s", verdict.message_id,
                    notice.order_id, exc,
                    extra=props(WebhookId=verdict.message_id, OrderId=notice.order_id))
        return refusal(sisbajud_error(
            SisbajudErrorCode.MENSAGERIA_UNAVAILABLE,
            "The order could not be fetched from the Mensageria; retry."),
            headers={"Retry-After": RETRY_AFTER_SECONDS})
    return _answer(verdict, notice, status)


def _answer(verdict: Verdict, notice: ParsedNotice, status: str) -> JSONResponse:
    log.info("Delivery %s %s (order %s revision %s)", verdict.message_id, status,
             notice.order_id, notice.revision,
             extra=props(WebhookId=verdict.message_id, OrderId=notice.order_id,
                         Revision=notice.revision, Status=status))
    return JSONResponse({"status": status, "webhookId": verdict.message_id})


def _store_down(verdict: Verdict, exc: Exception) -> JSONResponse:
    log.error("Could not record delivery %s: %s", verdict.message_id, exc,
              extra=props(WebhookId=verdict.message_id))
    return refusal(EsteiraError(ErrorCode.STORE_UNAVAILABLE,
                                "The delivery could not be recorded; retry."),
                   headers={"Retry-After": RETRY_AFTER_SECONDS})


async def health() -> dict[str, str]:
    """Liveness of the gateway process."""
    return {"status": "Healthy"}


async def prometheus_metrics() -> Response:
    """Prometheus exposition (under `esteira dev`, every process's metrics)."""
    return Response(metrics.exposition(), media_type=metrics.CONTENT_TYPE)
