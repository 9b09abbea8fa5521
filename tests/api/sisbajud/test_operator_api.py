"""The operator surface: orders, parked deliveries, alarms, institutions, outbox, metrics."""

from __future__ import annotations

from datetime import timedelta

from activities.sisbajud.metrics import NOTICES
from activities.sisbajud.models import (
    SisbajudHumanDecision,
    SisbajudInstitution,
    SisbajudOrder,
    SisbajudOrphan,
    SisbajudOutbox,
)
from activities.sisbajud.store import record_notice
from shared.db.models import utcnow
from tests.api.conftest import API_KEY

AUTH = {"X-API-Key": API_KEY}


async def _seed(sessions, settings) -> None:
    async with sessions() as session:
        await record_notice(session, webhook_id="hub-bad", order_id=None, revision=None,
                            parked_reason="body is not JSON", body=b"nope", skew_s=0,
                            skewed=False, secret_index=0)
    async with sessions() as session:
        session.add(SisbajudOrder(order_id="o-1", revision=2, state="RESOLVED", effect="FULL",
                                  reason_code="BLOCKED_TOTAL", operation="BLOQUEIO"))
        session.add(SisbajudOrder(order_id="o-2", revision=1, state="HUMAN_DECISION"))
        session.add(SisbajudHumanDecision(order_id="o-2", revision=1,
                                          reason="institution.unconfigured"))
        session.add(SisbajudInstitution(institution_id="OTHER", owner_subject="someone-else"))
        session.add(SisbajudInstitution(institution_id=settings.sisbajud.institutions[0].id,
                                        owner_subject=settings.sisbajud.m2m_subject))
        session.add(SisbajudOrphan(operation_id="op-1", transaction_id="tx-9",
                                   institution_id="BANK", block_alias="@block_sisbajud_ab",
                                   account_id="acc-1", code=None, amount="5"))
        session.add(SisbajudOutbox(idempotency_key="o-1:2:1", order_id="o-1", revision=2,
                                   payload={"effect": "FULL"}, state="PENDING",
                                   created_at=utcnow() - timedelta(seconds=90)))
        await session.commit()


async def test_operator_lists_need_the_api_key(api):
    assert (await api.get("/api/sisbajud/orders")).status_code == 401


async def test_orders_notices_alarms_institutions_and_outbox(api, settings):
    await _seed(api.context.sessions, settings)
    orders = (await api.get("/api/sisbajud/orders", headers=AUTH)).json()["items"]
    assert {(o["orderId"], o["state"], o["effect"], o["reasonCode"]) for o in orders} == {
        ("o-1", "RESOLVED", "FULL", "BLOCKED_TOTAL"), ("o-2", "HUMAN_DECISION", None, None)}
    resolved = (await api.get("/api/sisbajud/orders?state=resolved", headers=AUTH)).json()
    assert [o["orderId"] for o in resolved["items"]] == ["o-1"]
    detail = (await api.get("/api/sisbajud/orders/o-1", headers=AUTH)).json()
    assert detail["results"][0]["idempotencyKey"] == "o-1:2:1"
    assert (await api.get("/api/sisbajud/orders/nope", headers=AUTH)).status_code == 404
    parked = (await api.get("/api/sisbajud/notices?state=PARKED", headers=AUTH)).json()
    assert [n["webhookId"] for n in parked["items"]] == ["hub-bad"]
    alarms = (await api.get("/api/sisbajud/alarms", headers=AUTH)).json()["items"]
    assert [a["code"] for a in alarms] == ["notice.unusable"]
    decisions = (await api.get("/api/sisbajud/human-decisions", headers=AUTH)).json()
    assert decisions["items"][0]["reason"] == "institution.unconfigured"
    institutions = (await api.get("/api/sisbajud/institutions", headers=AUTH)).json()
    owned = {i["institutionId"]: i["ownedByThisExecutor"] for i in institutions["items"]}
    assert owned == {"OTHER": False, settings.sisbajud.institutions[0].id: True}
    outbox = (await api.get("/api/sisbajud/outbox", headers=AUTH)).json()
    assert outbox["depth"] == 1 and outbox["oldestAgeSeconds"] >= 90
    orphans = (await api.get("/api/sisbajud/orphans", headers=AUTH)).json()["items"]
    assert [(o["operationId"], o["code"]) for o in orphans] == [("op-1", None)]
    other = await api.get("/api/sisbajud/orphans?block_alias=@block_sisbajud_cd", headers=AUTH)
    assert other.json()["items"] == []


async def test_metrics_name_notices_orders_and_the_outbox(api):
    NOTICES.labels("200").inc()
    text = (await api.get("/api/metrics")).text
    for name in ("esteira_sisbajud_notices_total", "esteira_sisbajud_orders_total",
                 "esteira_sisbajud_outbox_depth", "esteira_sisbajud_outbox_oldest_age_seconds",
                 "esteira_sisbajud_orphan_operations_total",
                 "esteira_sisbajud_uncertain_writes"):
        assert name in text
