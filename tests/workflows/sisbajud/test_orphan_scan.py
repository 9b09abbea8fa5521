"""The orphan check reads every block account active inside the window each tick (found in
the store and in the ledger's transaction feed), and alarms a failing scan."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from activities.sisbajud import orphan_cursor
from activities.sisbajud.contracts.orders import block_account_alias
from activities.sisbajud.models import SisbajudAlarm, SisbajudOrphan, SisbajudWrite
from activities.sisbajud.orphans import OrphanChecker
from services.simulators.midaz.testkit import send
from shared.db.models import utcnow
from tests.support.sisbajud import INSTITUTION, stored

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])

ORDERS = {name: f"0190a000-0000-7000-8000-00000000000{n}" for n, name in enumerate("ABCD", 1)}


async def _block_account(world, name: str, written_days_ago: float) -> str:
    """A block account this executor wrote `written_days_ago`, with a foreign credit on it."""
    alias = block_account_alias(ORDERS[name])
    await world.account("@payer-" + name, "100", document=f"5555555555{ORDERS[name][-1]}")
    await world.account(alias, "0")
    at = utcnow() - timedelta(days=written_days_ago)
    async with world.sessions() as session:
        session.add(SisbajudWrite(
            idempotency_key=f"sisbajud:{ORDERS[name]}:1:block", order_id=ORDERS[name],
            revision=1, kind="block", institution_id=INSTITUTION, block_alias=alias,
            total="1", state="APPLIED", created_at=at, updated_at=at))
        await session.commit()
    (await world.midaz.post(f"{world.ledger.base}/transactions/json", json=send(
        {"@payer-" + name: "1"}, {alias: "1"}))).raise_for_status()
    return alias


def _operation_reads(world) -> list[tuple[str, str]]:
    """(account id, start_date) of every operations list the checker sends from now on."""
    reads: list[tuple[str, str]] = []

    async def hook(request: httpx.Request) -> None:
        parts = urlsplit(str(request.url))
        if parts.path.endswith("/operations"):
            reads.append((parts.path.split("/")[-2], parse_qs(parts.query)["start_date"][0]))

    world.http.event_hooks["request"].append(hook)
    return reads


def _with(world, **sisbajud) -> OrphanChecker:
    sis = world.settings.sisbajud.model_copy(update=sisbajud)
    return OrphanChecker(world.settings.model_copy(update={"sisbajud": sis}), world.sessions,
                         world.http)


def _feed_reads(world) -> list[str]:
    """`start_date` of every ledger transaction list the checker sends from now on."""
    reads: list[str] = []

    async def hook(request: httpx.Request) -> None:
        parts = urlsplit(str(request.url))
        if parts.path.endswith("/transactions") and request.method == "GET":
            reads.append(parse_qs(parts.query)["start_date"][0])

    world.http.event_hooks["request"].append(hook)
    return reads


async def _foreign_credit(world, name: str, alias: str) -> None:
    (await world.midaz.post(f"{world.ledger.base}/transactions/json", json=send(
        {"@payer-" + name: "1"}, {alias: "1"}))).raise_for_status()


async def test_every_block_account_active_inside_the_window_is_read_each_tick(world):
    aliases = {name: await _block_account(world, name, days)
               for name, days in (("A", 0), ("B", 3))}  # window: 48 h
    # C: written 3 days ago, nothing on it since: not active inside the window.
    aliases["C"] = block_account_alias(ORDERS["C"])
    await world.account("@payer-C", "100", document="55555555553")
    await world.account(aliases["C"], "0")
    async with world.sessions() as session:
        at = utcnow() - timedelta(days=3)
        session.add(SisbajudWrite(
            idempotency_key=f"sisbajud:{ORDERS['C']}:1:block", order_id=ORDERS["C"],
            revision=1, kind="block", institution_id=INSTITUTION, block_alias=aliases["C"],
            total="1", state="APPLIED", created_at=at, updated_at=at))
        await session.commit()
    checker = _with(world, orphan_scan_overlap_seconds=0)
    reads, feeds = _operation_reads(world), _feed_reads(world)
    ids = {(await world.midaz.get(f"{world.ledger.base}/accounts",
                                  params={"alias": a})).json()["items"][0]["id"]: name
           for name, a in aliases.items()}

    async def tick() -> tuple[int, list[str]]:
        before = len(reads)
        scan = await checker.scan()
        return scan.new_orphans, sorted(ids[a] for a, _ in reads[before:])

    found = [await tick(), await tick()]
    await _foreign_credit(world, "C", aliases["C"])  # someone else writes to C now
    found += [await tick(), await tick()]
    # A (written inside the window) and B (written before it, credited by someone else
    # inside it) on every tick; C from the tick after the foreign credit on it.
    assert found == [(2, ["A", "B"]), (0, ["A", "B"]), (1, ["A", "B", "C"]), (0, ["A", "B", "C"])]
    assert len(await stored(world, SisbajudOrphan)) == 3
    # One feed read per tick; the first from the window's start, the next ones from the last.
    assert len(feeds) == 4 and feeds[0] < feeds[1] <= feeds[2] <= feeds[3]
    assert await stored(world, SisbajudAlarm, code="ledger.orphan-scan-failed") == []


async def test_a_transaction_seen_in_the_feed_is_not_fetched_again(world):
    alias = await _block_account(world, "A", 0)
    checker = _with(world)
    fetched: list[str] = []

    async def hook(request: httpx.Request) -> None:
        if "/transactions/" in request.url.path and request.method == "GET":
            fetched.append(request.url.path)

    world.http.event_hooks["request"].append(hook)
    assert [(await checker.scan()).new_orphans, (await checker.scan()).new_orphans] == [1, 0]
    assert fetched == [] and alias


async def test_a_failing_feed_still_reads_the_accounts_written_and_raises_the_alarm(world):
    await _block_account(world, "A", 0)
    await _block_account(world, "B", 3)
    (await world.midaz.post("/_sim/faults", json={
        "route": "transactions.list", "kind": "error", "status": 500,
        "count": 1})).raise_for_status()
    checker = _with(world)
    failed = await checker.scan()
    assert (failed.failed_feeds, failed.accounts, failed.new_orphans) == (1, 1, 1)  # A only
    (alarm,) = await stored(world, SisbajudAlarm, code="ledger.orphan-scan-failed")
    assert "1 ledger transaction feeds could not be read" in alarm.message
    recovered = await checker.scan()  # the feed is read again from the window's start
    assert (recovered.failed_feeds, recovered.accounts, recovered.new_orphans) == (0, 2, 1)


async def test_the_old_full_scan_reads_every_account_every_time(world):
    for name, days in (("A", 0), ("B", 3), ("C", 3)):
        await _block_account(world, name, days)
    reads = _operation_reads(world)
    scan = await _with(world).scan_everything()
    assert (scan.accounts, scan.new_orphans, len(reads)) == (3, 3, 3)


async def test_a_failing_scan_keeps_its_cursor_and_raises_one_alarm_per_outage(world):
    await _block_account(world, "A", 0)
    checker = _with(world)
    assert (await checker.scan()).failed_accounts == 0
    clean = (await orphan_cursor.load(world.sessions)).recent_until

    async def fail(count: int) -> None:
        (await world.midaz.post("/_sim/faults", json={
            "route": "operations.list", "kind": "error", "status": 500,
            "count": count})).raise_for_status()

    await fail(2)
    outage = [await checker.scan(), await checker.scan()]
    assert [s.failed_accounts for s in outage] == [1, 1]
    cursor = await orphan_cursor.load(world.sessions)
    assert cursor.recent_until == clean and cursor.failing_since is not None
    alarms = await stored(world, SisbajudAlarm, code="ledger.orphan-scan-failed")
    assert len(alarms) == 1 and "1 block accounts could not be read" in alarms[0].message
    assert (await checker.scan()).failed_accounts == 0  # recovered
    cursor = await orphan_cursor.load(world.sessions)
    assert cursor.recent_until > clean and cursor.failing_since is None
    await fail(1)
    await checker.scan()
    assert len(await stored(world, SisbajudAlarm, code="ledger.orphan-scan-failed")) == 2
