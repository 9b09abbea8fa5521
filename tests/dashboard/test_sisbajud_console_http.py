"""The SISBAJUD console over HTTP: every action with the signed-in operator as the actor, and
every refusal (same person, a confirmation that differs, no reason, done already) shown on the
page as a message with its code, never an error page."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import pytest
import pytest_asyncio
from sqlmodel import select

from activities.sisbajud.models import (
    SisbajudAlarm,
    SisbajudHumanDecision,
    SisbajudNotice,
    SisbajudOrder,
    SisbajudOrphan,
    SisbajudOutbox,
)
from services.app import create_app
from services.dashboard.passwords import hash_password
from shared.db.models import OperationalEvent
from shared.settings import OperatorAccount
from tests.api.conftest import make_context
from tests.dashboard.conftest import csrf_of, sign_in
from tests.dashboard.sisbajud_rows import ORDER, PARKED_ORDER, seed_console

PASSWORD = "two people decide"
sqlite_only = pytest.mark.parametrize("backend", ["sqlite"])


@pytest_asyncio.fixture
async def pair(settings, temporal_env) -> AsyncIterator[tuple[httpx.AsyncClient, ...]]:
    """Alice and Bob, each signed in on their own browser, on one app."""
    encoded = hash_password(PASSWORD)
    settings.dashboard.operators = [OperatorAccount(name=name, password_hash=encoded)
                                    for name in ("alice", "bob")]
    context = await make_context(settings, temporal_env)
    app = create_app(context)
    clients = []
    for name in ("alice", "bob"):
        client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                   base_url="http://esteira")
        assert (await sign_in(client, name, PASSWORD)).status_code == 303
        client.context = context  # type: ignore[attr-defined]
        clients.append(client)
    try:
        yield tuple(clients)
    finally:
        for client in clients:
            await client.aclose()
        await context.engine.dispose()


async def _post(client: httpx.AsyncClient, page: str, action: str,
                **fields: str) -> str:
    """Post a form from `page` as the browser would; the page it lands on, with its notice."""
    token = csrf_of((await client.get(page)).text)
    answer = await client.post(action, data={"csrf_token": token, "back": page, **fields})
    assert answer.status_code == 303, answer.text
    assert answer.headers["location"] == page
    return (await client.get(page)).text


def _notice(page: str) -> str:
    found = re.search(r'<p class="notice (\w+)">(.*?)</p>', page, re.S)
    assert found, "the page shows no notice"
    return f"{found.group(1)}: {found.group(2)}"


async def test_two_people_resolve_a_decision_and_each_refusal_is_a_message(pair):
    alice, bob = pair
    ids = await seed_console(alice.context.sessions)
    action = f"/sisbajud/decisions/{ids['decision']}/resolve"
    full = {"effect": "FULL", "executedAmount": "100.00", "transactionId": "tx-write-1"}
    page = await _post(alice, "/sisbajud", action, reason="the ledger shows it", **full)
    assert "waits for a second operator" in _notice(page)
    assert 'data-proposed-by="operator:alice"' in page and ">Confirm</button>" in page
    # The proposal is what the confirming form already holds.
    assert 'value="100.00"' in page and 'value="tx-write-1"' in page

    page = await _post(alice, "/sisbajud", action, reason="me again", **full)
    assert _notice(page).startswith("error: <code>sisbajud.same-actor</code>")
    page = await _post(bob, "/sisbajud", action, reason="I read 90",
                       **{**full, "executedAmount": "90.00"})
    assert _notice(page).startswith("error: <code>sisbajud.proposal-mismatch</code>")
    # Confirmed as proposed, it reaches the order's workflow: none waits in this test.
    page = await _post(bob, "/sisbajud?decisions=open", action, reason="confirmed", **full)
    assert _notice(page).startswith("error: <code>sisbajud.decision-not-open</code>")
    async with alice.context.sessions() as session:
        row = await session.get(SisbajudHumanDecision, ids["decision"])
    assert row is not None and row.proposed_by == "operator:alice" and row.resolved_at is None


async def test_acknowledge_needs_a_reason_records_the_session_actor_and_happens_once(pair):
    alice, bob = pair
    ids = await seed_console(alice.context.sessions)
    alarm = f"/sisbajud/alarms/{ids['alarm']}/acknowledge"
    page = await _post(alice, "/sisbajud/alarms", alarm, reason="  ")
    assert _notice(page).startswith("error: <code>request.invalid</code> A reason is required")
    page = await _post(alice, "/sisbajud/alarms", alarm, reason="order fixed upstream")
    assert "Alarm" in _notice(page) and "acknowledged by operator:alice" in page
    page = await _post(bob, "/sisbajud/alarms", alarm, reason="me too")
    assert _notice(page).startswith("error: <code>sisbajud.already-acknowledged</code>")

    orphan = "/sisbajud/orphans/op-foreign-1/acknowledge"
    page = await _post(bob, "/sisbajud/orphans?block_alias=%40block-simbank", orphan,
                       reason="a manual correction by the bank")
    assert "acknowledged by operator:bob" in _notice(page)
    async with alice.context.sessions() as session:
        acked = await session.get(SisbajudAlarm, ids["alarm"])
        foreign = await session.get(SisbajudOrphan, "op-foreign-1")
        trail = (await session.exec(select(OperationalEvent).where(
            OperationalEvent.type.in_(["AlarmAcknowledged", "OrphanAcknowledged"])))).all()
    assert acked is not None and acked.acknowledged_by == "operator:alice"
    assert foreign is not None
    assert foreign.acknowledgement_reason == "a manual correction by the bank"
    assert sorted(e.actor for e in trail) == ["operator:alice", "operator:bob"]


async def test_requeue_notice_result_and_order_from_the_parked_page(pair):
    alice, bob = pair
    ids = await seed_console(alice.context.sessions)
    page = (await alice.get("/sisbajud/parked")).text
    for form in (f"/sisbajud/notices/{ids['notice']}/requeue",
                 f"/sisbajud/results/{ids['result']}/requeue",
                 f"/sisbajud/orders/{PARKED_ORDER}/requeue"):
        assert f'action="{form}"' in page
    page = await _post(alice, "/sisbajud/parked", f"/sisbajud/notices/{ids['notice']}/requeue",
                       reason="the order is readable now")
    assert "requeued by operator:alice" in _notice(page)
    page = await _post(bob, "/sisbajud/parked", f"/sisbajud/notices/{ids['notice']}/requeue",
                       reason="again")
    assert _notice(page).startswith("error: <code>sisbajud.not-parked</code>")
    page = await _post(alice, "/sisbajud/parked", f"/sisbajud/results/{ids['result']}/requeue",
                       reason="the Mensageria is back")
    assert "requeued" in _notice(page) and "No parked results." in page
    page = await _post(bob, f"/sisbajud/orders/{PARKED_ORDER}",
                       f"/sisbajud/orders/{PARKED_ORDER}/requeue", reason="institution set")
    assert "requeued by operator:bob" in _notice(page)
    async with alice.context.sessions() as session:
        notice = await session.get(SisbajudNotice, ids["notice"])
        result = await session.get(SisbajudOutbox, ids["result"])
        order = await session.get(SisbajudOrder, PARKED_ORDER)
    assert notice is not None and notice.state == "ACCEPTED"
    assert result is not None and result.state == "PENDING"
    assert order is not None and order.run_id is None


@sqlite_only
async def test_a_form_without_its_csrf_token_or_pointing_elsewhere_goes_nowhere(pair):
    alice, _bob = pair
    ids = await seed_console(alice.context.sessions)
    refused = await alice.post(f"/sisbajud/alarms/{ids['alarm']}/acknowledge",
                               data={"reason": "x"})
    assert refused.status_code == 403
    token = csrf_of((await alice.get("/sisbajud/alarms")).text)
    answer = await alice.post(f"/sisbajud/alarms/{ids['alarm']}/acknowledge", data={
        "csrf_token": token, "reason": "x", "back": "//evil.example/sisbajud"})
    assert answer.headers["location"] == "/sisbajud/alarms"


async def test_order_page_shows_results_writes_decisions_with_keys_and_the_temporal_link(pair):
    alice, _bob = pair
    await seed_console(alice.context.sessions)
    page = (await alice.get(f"/sisbajud/orders/{ORDER}")).text
    rows = re.findall(r'<tr data-kind="(\w+)">(.*?)</tr>', page, re.S)
    assert [kind for kind, _ in rows] == ["result", "write", "result", "decision"]
    assert f"{ORDER}:1:ACCEPTED" in rows[0][1] and "ACCEPTED" in rows[0][1]
    assert f"{ORDER}:1:block" in rows[1][1] and "tx-write-1" in rows[1][1]
    assert "AWAITING_RECONCILIATION" in rows[2][1]
    assert "waiting for a person" in rows[3][1]
    ui = alice.context.settings.ports.temporal_ui
    assert (f"http://127.0.0.1:{ui}/namespaces/default/workflows/sisbajud-order%3A{ORDER}"
            in page)
    missing = await alice.get("/sisbajud/orders/nope")
    assert missing.status_code == 404 and "not-found" in missing.text


async def test_lists_filter_and_the_outbox_counts_by_state(pair):
    alice, _bob = pair
    await seed_console(alice.context.sessions)
    parked = (await alice.get("/sisbajud/orders?state=PARKED")).text
    assert PARKED_ORDER in parked and f'data-order-id="{ORDER}"' not in parked
    outbox = (await alice.get("/sisbajud/outbox?state=SENT")).text
    assert "PENDING: 1 · PARKED: 1 · SENT: 1" in outbox
    assert f"{ORDER}:1:ACCEPTED" in outbox and f"{ORDER}:1:AWAITING_PERSON" not in outbox
    alarms = (await alice.get("/sisbajud/alarms?code=ledger.monitor-lost")).text
    assert "No alarms." in alarms
    institutions = (await alice.get("/sisbajud/institutions")).text
    assert 'data-institution-id="SIMBANK"' in institutions and 'class="connection"' in institutions
    overview = (await alice.get("/sisbajud")).text
    assert '<svg' in overview and "ACCEPTED" in overview and "<title id=" in overview
