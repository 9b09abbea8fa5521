"""The webhook gateway's walk once a delivery's signature holds: record it once per
`webhook-id`, fetch its order as the seed's table says, settle it when the order can't run."""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import httpx
from sqlalchemy.exc import SQLAlchemyError
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio.exceptions import ApplicationError

from activities.sisbajud.clients import MensageriaClient
from activities.sisbajud.contracts.orders import AlarmCode, FetchOrderResult, FetchStatus
from activities.sisbajud.metrics import NOTICE_SECONDS, NOTICES
from activities.sisbajud.models import SisbajudNotice
from activities.sisbajud.notices import ACCEPTED, PARKED, WITHDRAWN, settle_notice
from activities.sisbajud.orders import fetch_order
from activities.sisbajud.store import raise_alarm, record_notice, stored_webhook_id
from shared.db.engine import Sessions
from shared.settings import Settings

# skew_s is an INTEGER column (32-bit on PostgreSQL); a skew past it is kept at the bound.
_INT_MAX = 2**31 - 1
# Notice states the tick has already handed to the order's workflow.
HANDED_ON = frozenset({"INGESTED", "DUPLICATE"})


class DeliveryStatus(StrEnum):
    """What the gateway answers a delivery it took (`{"status": …}`)."""

    ACCEPTED = "accepted"
    DUPLICATE = "duplicate"
    PARKED = "parked"
    WITHDRAWN = "withdrawn"


class OrderUnavailable(Exception):
    """The Mensageria gave no usable answer (401, 429, 5xx, network, deadline): retry later."""


class StoreUnavailable(Exception):
    """The delivery could not be recorded or settled: retry later."""


@dataclass(frozen=True)
class Delivery:
    """A delivery whose signature holds: what it names (or why it is unusable) and how it
    was signed."""

    webhook_id: str
    order_id: str | None
    revision: int | None
    unusable: str | None
    body: bytes
    skew_s: int | None
    skewed: bool
    secret_index: int | None


@dataclass(frozen=True)
class _Recorded:
    inserted: bool
    state: str | None
    reused: bool = False


def _column(skew_s: int | None) -> int | None:
    return None if skew_s is None else max(-_INT_MAX, min(_INT_MAX, skew_s))


class Deliveries:
    """The gateway's operations, on one HTTP client to the Mensageria (given, or opened on
    the first fetch and kept for the process: its token is reused across deliveries)."""

    def __init__(self, settings: Settings, sessions: Sessions,
                 http: httpx.AsyncClient | None = None) -> None:
        self._settings = settings
        self._sessions = sessions
        self._given = http
        self._own: httpx.AsyncClient | None = None
        self._mensageria: MensageriaClient | None = None

    async def accept(self, delivery: Delivery) -> str:
        """Record the delivery, then (a usable one not handed on yet) fetch its order: the
        `status` to answer, or `OrderUnavailable` / `StoreUnavailable` for a 503."""
        recorded = await self._record(delivery)
        if recorded.reused:
            # A redelivery can't change which body the id was first recorded with.
            return DeliveryStatus.DUPLICATE
        if delivery.unusable:
            return DeliveryStatus.PARKED
        if recorded.state not in (ACCEPTED, None):  # handed on, withdrawn or parked
            return (DeliveryStatus.DUPLICATE if recorded.state in HANDED_ON
                    else str(recorded.state).lower())
        assert delivery.order_id is not None
        # Recorded first, fetched second: a Mensageria outage leaves the notice on record
        # (once), and the Hub's redelivery of the same webhook-id comes back to fetch again.
        fetched = await self.fetch(delivery.order_id)
        if fetched.status == FetchStatus.FOUND:
            return DeliveryStatus.ACCEPTED if recorded.inserted else DeliveryStatus.DUPLICATE
        if fetched.status == FetchStatus.WITHDRAWN:
            state, reason, alarm = (WITHDRAWN, f"the Mensageria answered {fetched.http_status}",
                                    None)
        else:
            state = PARKED
            reason = fetched.detail or f"order fetch answered {fetched.http_status}"
            alarm = (AlarmCode.ORDER_INVALID if fetched.http_status == 200
                     else AlarmCode.ORDER_FETCH_REJECTED)
        await self._settle(delivery.webhook_id, state=state, reason=reason,
                           order_id=delivery.order_id, alarm=alarm,
                           http_status=fetched.http_status)
        return state.lower()

    async def fetch(self, order_id: str) -> FetchOrderResult:
        """One `GET …/orders/{orderId}` under the gateway's deadline, classified as the order's
        workflow classifies it: FOUND, WITHDRAWN (404/410) or PARKED."""
        timeout_s = self._settings.sisbajud.webhook_fetch_timeout_seconds
        try:
            # A total deadline: httpx's timeouts bound each phase, not the whole exchange.
            async with asyncio.timeout(timeout_s):
                return await fetch_order(self._mensageria_client(), order_id)
        except TimeoutError as exc:
            raise OrderUnavailable(f"no answer within {timeout_s:g}s") from exc
        except ApplicationError as exc:  # the retryable `mensageria.unavailable`
            raise OrderUnavailable(str(exc)) from exc

    def count(self, status_code: int, seconds: float) -> None:
        """One answered delivery in the gateway's metrics."""
        NOTICES.labels(str(status_code)).inc()
        NOTICE_SECONDS.observe(seconds)

    async def aclose(self) -> None:
        """Close the HTTP client this opened (a given one stays its owner's)."""
        if self._own is not None:
            await self._own.aclose()
            self._own = self._mensageria = None

    def _mensageria_client(self) -> MensageriaClient:
        if self._mensageria is None:
            http = self._given
            if http is None:
                http = self._own = httpx.AsyncClient(
                    timeout=self._settings.sisbajud.webhook_fetch_timeout_seconds)
            self._mensageria = MensageriaClient.from_settings(http, self._settings)
        return self._mensageria

    async def _record(self, delivery: Delivery) -> _Recorded:
        """Record the delivery once per `webhook-id`; a redelivery whose signed body differs
        from the recorded one raises `notice.id-reused` (the new body is not recorded)."""
        digest = hashlib.sha256(delivery.body).hexdigest()
        try:
            async with self._sessions() as session:
                inserted = await record_notice(
                    session, webhook_id=delivery.webhook_id, order_id=delivery.order_id,
                    revision=delivery.revision, parked_reason=delivery.unusable,
                    body=delivery.body, skew_s=_column(delivery.skew_s),
                    skewed=delivery.skewed, secret_index=delivery.secret_index,
                    body_sha256=digest)
                if inserted:
                    return _Recorded(True, ACCEPTED)
                return await self._again(session, delivery, digest)
        except (SQLAlchemyError, OSError) as exc:
            raise StoreUnavailable(str(exc)) from exc

    async def _again(self, session: AsyncSession, delivery: Delivery, digest: str) -> _Recorded:
        """A delivery recorded before under this id: its state, or an alarm when the signed
        body differs."""
        key = stored_webhook_id(delivery.webhook_id)
        row = (await session.exec(select(SisbajudNotice.state, SisbajudNotice.body_sha256)
                                  .where(SisbajudNotice.webhook_id == key))).first()
        state, recorded = row if row is not None else (None, None)
        if recorded is not None and recorded != digest:
            await raise_alarm(
                session, AlarmCode.NOTICE_ID_REUSED.value,
                f"Delivery {key} came again with a different signed body; the first one "
                "recorded stands and this one is not executed",
                webhook_id=key, order_id=delivery.order_id, revision=delivery.revision,
                recorded_sha256=recorded, received_sha256=digest)
            await session.commit()
            return _Recorded(False, state, reused=True)
        return _Recorded(False, ACCEPTED if delivery.unusable else state)

    async def _settle(self, webhook_id: str, *, state: str, reason: str, order_id: str,
                      alarm: AlarmCode | None, **details: Any) -> None:
        """ACCEPTED -> `state` (withdrawn, parked) with its alarm, unless the tick took the
        notice first (its order's workflow then fetches and decides the same way)."""
        try:
            async with self._sessions() as session:
                await settle_notice(session, webhook_id, state=state, reason=reason,
                                    order_id=order_id, alarm=alarm, **details)
        except (SQLAlchemyError, OSError) as exc:
            raise StoreUnavailable(str(exc)) from exc
