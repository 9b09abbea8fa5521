"""A transaction the ledger's feed showed, or whose id Midaz answered to our write, is not
fetched by the orphan check; a foreign one on the same account still is found."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from activities.sisbajud.contracts.orders import block_account_alias
from activities.sisbajud.models import SisbajudOrphan, SisbajudWrite
from activities.sisbajud.orphans import OrphanChecker
from services.simulators.midaz.testkit import send
from shared.db.models import utcnow
from tests.support.sisbajud import INSTITUTION, stored

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])

ORDER = "0190a000-0000-7000-8000-0000000000e1"
KEY = f"sisbajud:{ORDER}:1:block"


def _transaction_reads(world) -> list[str]:
    """Ids of every `GET …/transactions/{id}` the checker sends from now on."""
    reads: list[str] = []

    async def hook(request: httpx.Request) -> None:
        *_, parent, last = request.url.path.split("/")
        if request.method == "GET" and parent == "transactions":
            reads.append(last)

    world.http.event_hooks["request"].append(hook)
    return reads


async def test_our_transactions_are_read_once_and_foreign_ones_still_found(world):
    alias = block_account_alias(ORDER)
    await world.account("@payer-e", "100", document="55555555501")
    await world.account(alias, "0")
    async with world.sessions() as session:
        session.add(SisbajudWrite(
            idempotency_key=KEY, order_id=ORDER, revision=1, kind="block",
            institution_id=INSTITUTION, block_alias=alias, total="1", state="APPLIED",
            created_at=utcnow(), updated_at=utcnow()))
        await session.commit()
    ours = (await world.midaz.post(f"{world.ledger.base}/transactions/json", json=send(
        {"@payer-e": "1"}, {alias: "1"}, metadata={"code": KEY}))).json()["id"]
    sis = world.settings.sisbajud.model_copy(update={"orphan_scan_overlap_seconds": 3600})
    checker = OrphanChecker(world.settings.model_copy(update={"sisbajud": sis}),
                            world.sessions, world.http)
    reads = _transaction_reads(world)

    first, second = await checker.scan(), await checker.scan()
    assert (first.accounts, first.new_orphans, second.accounts, second.new_orphans) == (
        1, 0, 1, 0)
    assert reads == [] and ours  # the ledger's feed showed its code: never fetched

    foreign = (await world.midaz.post(f"{world.ledger.base}/transactions/json", json=send(
        {"@payer-e": "1"}, {alias: "1"}))).json()["id"]
    assert (await checker.scan()).new_orphans == 1
    assert reads == []
    assert [o.transaction_id for o in await stored(world, SisbajudOrphan)] == [foreign]


async def test_a_transaction_id_our_write_recorded_is_never_read_back(world):
    alias = block_account_alias(ORDER)
    await world.account("@payer-e", "100", document="55555555501")
    await world.account(alias, "0")
    ours = (await world.midaz.post(f"{world.ledger.base}/transactions/json", json=send(
        {"@payer-e": "1"}, {alias: "1"}, metadata={"code": KEY}))).json()["id"]
    async with world.sessions() as session:
        session.add(SisbajudWrite(
            idempotency_key=KEY, order_id=ORDER, revision=1, kind="block",
            institution_id=INSTITUTION, block_alias=alias, total="1", state="APPLIED",
            transaction_id=ours, created_at=utcnow(), updated_at=utcnow()))
        await session.commit()
    reads = _transaction_reads(world)
    checker = OrphanChecker(world.settings, world.sessions, world.http)

    assert (await checker.scan()).new_orphans == 0
    assert reads == []
    foreign = (await world.midaz.post(f"{world.ledger.base}/transactions/json", json=send(
        {"@payer-e": "1"}, {alias: "1"}))).json()["id"]
    assert (await checker.scan()).new_orphans == 1
    assert reads == []  # the feed showed it without a code
    assert [o.transaction_id for o in await stored(world, SisbajudOrphan)] == [foreign]


async def test_block_accounts_are_read_concurrently(world):
    for n in range(3):
        order = f"0190a000-0000-7000-8000-0000000000f{n}"
        alias = block_account_alias(order)
        await world.account(alias, "0")
        async with world.sessions() as session:
            session.add(SisbajudWrite(
                idempotency_key=f"sisbajud:{order}:1:block", order_id=order, revision=1,
                kind="block", institution_id=INSTITUTION, block_alias=alias, total="1",
                state="APPLIED", created_at=utcnow(), updated_at=utcnow()))
            await session.commit()
    asked = 0
    all_asked = asyncio.Event()

    async def hold(request: httpx.Request) -> None:
        # Each operations read waits until all three were asked: one account after another
        # never gets there and times out.
        nonlocal asked
        if request.url.path.endswith("/operations"):
            asked += 1
            if asked == 3:
                all_asked.set()
            await asyncio.wait_for(all_asked.wait(), timeout=10)

    world.http.event_hooks["request"].append(hold)
    scan = await OrphanChecker(world.settings, world.sessions, world.http).scan()
    assert (scan.accounts, scan.failed_accounts, asked) == (3, 0, 3)
