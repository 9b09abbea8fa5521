"""Orders send their own results as they queue them; the drain delivers what they could not."""

from __future__ import annotations

from sqlalchemy import update

from activities.sisbajud.models import SisbajudOutbox
from shared.db.models import utcnow
from tests.support.sisbajud import World, new_order_id, sisbajud_settings, stored
from tests.support.sisbajud_states import states

IN_ORDER = [("accepted", "ACCEPTED"), ("executing", "EXECUTING"), ("1", "RESOLVED")]


async def test_results_reach_the_mensageria_without_any_tick(world, temporal_env):
    client = temporal_env.client
    order_id = new_order_id()
    await world.account("@dr-1", "100")
    await world.order(order_id, amount="40")
    async with world.worker(client):
        await world.execute(client, order_id)
    results = await world.results(order_id)
    assert states(results) == IN_ORDER
    rows = await stored(world, SisbajudOutbox, order_id=order_id)
    assert sorted(r.state for r in rows) == ["SENT", "SENT", "SENT"]
    assert all(r.attempts == 1 for r in rows)


async def test_a_failed_own_send_is_delivered_by_the_drain_once_and_in_order(
        settings, task_queue, temporal_env):
    base = sisbajud_settings(settings, task_queue)
    # A refused send waits an hour: only the test moving the clock makes it due again.
    slow = base.model_copy(update={"sisbajud": base.sisbajud.model_copy(update={
        "outbox_retry_initial_seconds": 3600, "outbox_retry_max_seconds": 3600})})
    world = await World(slow).start()
    try:
        client = temporal_env.client
        order_id = new_order_id()
        await world.account("@dr-2", "100")
        await world.order(order_id, amount="40")
        await world.mensageria.post("/_sim/faults", json={"route": "results.post",
                                                          "status": 503, "count": 1})
        async with world.worker(client):
            await world.execute(client, order_id)
            # ACCEPTED was refused and backs off: the later states wait behind it, even for
            # the drain, so the Mensageria never hears EXECUTING before ACCEPTED.
            held = await world.tick(client)
            assert states(await world.results(order_id)) == []
            async with world.sessions() as session:
                await session.exec(update(SisbajudOutbox).where(  # type: ignore[call-overload]
                    SisbajudOutbox.order_id == order_id).values(next_attempt_at=utcnow()))
                await session.commit()
            drained = await world.tick(client)
            again = await world.tick(client)
        assert held.stages[3].done == 0
        assert drained.stages[3].done == 3 and again.stages[3].done == 0
        results = await world.results(order_id)
        assert states(results) == IN_ORDER
        assert {r["idempotencyKey"]: r["deliveries"] for r in results["results"]} == {
            f"{order_id}:1:accepted": 1, f"{order_id}:1:executing": 1, f"{order_id}:1:1": 1}
        accepted = [a["outcome"] for a in results["attempts"]
                    if a["idempotencyKey"] == f"{order_id}:1:accepted"]
        assert accepted == ["refused-503", "accepted"]
        assert not any(a["conflicting"] for a in results["attempts"])
        rows = {r.idempotency_key: r for r in await stored(world, SisbajudOutbox,
                                                           order_id=order_id)}
        assert {k: r.state for k, r in rows.items()} == {
            f"{order_id}:1:accepted": "SENT", f"{order_id}:1:executing": "SENT",
            f"{order_id}:1:1": "SENT"}
        assert rows[f"{order_id}:1:accepted"].attempts == 2
    finally:
        await world.close()
