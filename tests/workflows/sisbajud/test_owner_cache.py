"""The ownership check reads Midaz's owner once per short window, again after a 403, and writes
our record only when it changes."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import event

from activities.sisbajud import owner_cache
from activities.sisbajud.clients import MidazClient, UpstreamError
from activities.sisbajud.ownership import check_ownership
from shared.contracts.sisbajud import Ownership
from tests.support.sisbajud import INSTITUTION, LEDGER, ORG

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])


def _midaz(world) -> MidazClient:
    (institution,) = [i for i in world.settings.sisbajud.institutions if i.id == INSTITUTION]
    return MidazClient.for_institution(world.http, world.settings, institution)


async def _owned_by(world, owner: str) -> None:
    (await world.midaz.post("/_sim/bootstrap", json={
        "organizationId": ORG, "ledgerId": LEDGER,
        "ledgerMetadata": {"sisbajudOwner": owner}})).raise_for_status()


def _ledger_reads(world) -> list[str]:
    """Every `GET …/ledgers/{id}` the executor sends from now on."""
    reads: list[str] = []
    path = httpx.URL(_midaz(world).ledger_path).path

    async def hook(request: httpx.Request) -> None:
        if request.method == "GET" and request.url.path == path:
            reads.append(path)

    world.http.event_hooks["request"].append(hook)
    return reads


def _institution_writes(world) -> list[str]:
    """Every INSERT or UPDATE of `sisbajud_institutions` from now on."""
    writes: list[str] = []

    def seen(_conn, _cursor, statement: str, *_args) -> None:
        if "sisbajud_institutions" in statement and statement.lstrip().upper().startswith(
                ("INSERT", "UPDATE")):
            writes.append(statement)

    event.listen(world.engine.sync_engine, "before_cursor_execute", seen)
    return writes


async def _check(world):
    return await check_ownership(world.settings, world.sessions, world.http, INSTITUTION)


async def test_the_ledger_owner_is_read_once_per_window_and_again_after_a_403(world):
    subject = await _midaz(world).subject()
    assert subject
    await _owned_by(world, subject)
    reads = _ledger_reads(world)
    for _ in range(3):
        assert (await _check(world)).ownership == Ownership.OWNED
    assert len(reads) == 1

    # The ledger moves to another executor, and Midaz refuses us: the next check reads again.
    await _owned_by(world, "exec-other")
    (await world.midaz.post("/_sim/faults", json={
        "route": "accounts.get", "kind": "error", "status": 403})).raise_for_status()
    with pytest.raises(UpstreamError) as refused:
        await _midaz(world).account("any")
    assert refused.value.status == 403
    result = await _check(world)
    assert (result.ownership, result.owner) == (Ownership.FOREIGN, "exec-other")
    assert len(reads) == 2


async def test_an_expired_owner_is_read_again(world, monkeypatch):
    monkeypatch.setattr(owner_cache, "OWNER_TTL_SECONDS", 0.0)
    reads = _ledger_reads(world)
    await _check(world)
    await _check(world)
    assert len(reads) == 2


async def test_a_check_writes_the_record_only_when_it_is_new_or_midaz_disagrees(world):
    subject = await _midaz(world).subject()
    await _owned_by(world, subject)
    writes = _institution_writes(world)
    assert (await _check(world)).ownership == Ownership.OWNED
    assert len(writes) == 1  # created
    assert (await _check(world)).ownership == Ownership.OWNED
    assert len(writes) == 1  # agreed: nothing written

    owner_cache.forget(_midaz(world))
    await _owned_by(world, "exec-other")
    result = await _check(world)
    assert (result.ownership, result.owner) == (Ownership.FOREIGN, "exec-other")
    assert [w.lstrip().split()[0].upper() for w in writes] == ["INSERT", "UPDATE"]
