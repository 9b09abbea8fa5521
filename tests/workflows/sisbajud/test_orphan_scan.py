"""The orphan check reads from its cursor, sweeps the rest in slices, and alarms a failing scan."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from activities.sisbajud import orphan_cursor
from activities.sisbajud.orphans import OrphanChecker
from services.simulators.midaz.testkit import send
from shared.contracts.sisbajud import block_account_alias
from shared.db.models import utcnow
from shared.db.sisbajud_models import SisbajudAlarm, SisbajudOrphan, SisbajudWrite
from tests.support.sisbajud import INSTITUTION, stored

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])

# Aliases sort in this order, so the sweep's slices are predictable.
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


async def test_a_tick_reads_accounts_written_since_its_cursor_and_a_sweep_slice(world):
    aliases = {name: await _block_account(world, name, days)
               for name, days in (("A", 0), ("B", 3), ("C", 3))}  # window: 48 h
    checker = _with(world, orphan_sweep_accounts_per_tick=1, orphan_scan_overlap_seconds=0)
    reads = _operation_reads(world)

    async def tick() -> tuple[int, list[str]]:
        before = len(reads)
        scan = await checker.scan()
        return scan.new_orphans, [a for a, _ in reads[before:]]

    found = [await tick(), await tick()]
    aliases["D"] = await _block_account(world, "D", 0)  # written after the cursor
    found += [await tick(), await tick(), await tick(), await tick()]
    ids = {(await world.midaz.get(f"{world.ledger.base}/accounts",
                                  params={"alias": a})).json()["items"][0]["id"]: name
           for name, a in aliases.items()}
    found = [(n, sorted(ids[a] for a in accounts)) for n, accounts in found]
    # Tick 1: A (written since no cursor); its sweep slice is A too. Then one account of the
    # sweep per tick, plus D once, in the tick after it was written; past D the sweep starts
    # over. B and C, written long ago, are never read outside the sweep.
    assert found == [(1, ["A"]), (1, ["B"]), (2, ["C", "D"]), (0, ["D"]), (0, []), (0, ["A"])]
    # Every read covers the window, whatever the cursor.
    assert len({start for _, start in reads}) <= 2  # the same start, give or take a second
    assert len(await stored(world, SisbajudOrphan)) == 4
    assert await stored(world, SisbajudAlarm, code="ledger.orphan-scan-failed") == []


async def test_the_old_full_scan_reads_every_account_every_time(world):
    for name, days in (("A", 0), ("B", 3), ("C", 3)):
        await _block_account(world, name, days)
    reads = _operation_reads(world)
    scan = await _with(world).scan_everything()
    assert (scan.accounts, scan.new_orphans, len(reads)) == (3, 3, 3)


async def test_a_failing_scan_keeps_its_cursor_and_raises_one_alarm_per_outage(world):
    await _block_account(world, "A", 0)
    checker = _with(world, orphan_sweep_accounts_per_tick=5)
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
