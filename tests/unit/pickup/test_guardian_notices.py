"""Each transition a guardian cares about queues its notification, and wakes the drain."""

from __future__ import annotations

from datetime import timedelta

from activities.pickup.contracts.board import TimerInput, TimerKind
from activities.pickup.models import EarlyRelease, Notification
from activities.pickup.sweeps import PickupSweeps
from shared.db.models import utcnow


async def _notes(store, kind: str) -> list[tuple[int, str, str]]:
    rows = await store.seed.all(Notification, Notification.kind == kind)
    return [(n.guardian_id, n.message, n.status) for n in rows]


async def _family(store):
    school = await store.seed.school()
    student = await store.seed.student(school, name="Ana")
    maria = await store.seed.guardian("Maria")
    joao = await store.seed.guardian("João")
    await store.seed.link(student, maria)
    await store.seed.link(student, joao)
    return student, maria, joao


async def test_arrival_ready_and_pickup_tell_every_guardian_who_picked_up(store):
    student, maria, joao = await _family(store)
    kicker = store.kicker

    [waiting] = await store.pickup.access.signal_arrivals(guardian_id=maria.id,
                                                          student_ids=[student.id])
    assert await _notes(store, "arrival-acknowledged") == [
        (maria.id, "Recebemos o aviso de chegada para Ana: a escola já está preparando a "
                   "saída.", "pending"),
        (joao.id, "Recebemos o aviso de chegada para Ana: a escola já está preparando a "
                  "saída.", "pending")]
    assert kicker.notifications == 1
    ready = await store.pickup.board.mark_ready(student_id=student.id,
                                                version=waiting.version, actor="secretaria")
    assert [m for _, m, _ in await _notes(store, "student-ready")] == [
        "Ana está na saída: a retirada está liberada na catraca."] * 2
    assert kicker.notifications == 2
    await store.pickup.board.confirm_pickup(student_id=student.id, version=ready.version,
                                            actor="secretaria")
    assert [m for _, m, _ in await _notes(store, "picked-up")] == [
        "A retirada de Ana foi concluída por Maria."] * 2
    assert kicker.notifications == 3


async def test_a_staff_arrival_and_pickup_say_the_school_confirmed_it(store):
    student, _, _ = await _family(store)
    board = store.pickup.board
    waiting = await board.signal_arrival(student_id=student.id, actor="secretaria")
    ready = await board.mark_ready(student_id=student.id, version=waiting.version,
                                   actor="secretaria")
    await board.confirm_pickup(student_id=student.id, version=ready.version,
                               actor="secretaria")
    assert len(await _notes(store, "arrival-acknowledged")) == 2
    assert {m for _, m, _ in await _notes(store, "picked-up")} == {
        "A retirada de Ana foi confirmada pela escola."}


async def test_the_ready_timeout_tells_the_guardians_it_was_reverted(store):
    school = await store.seed.school()
    student = await store.seed.ready_student(school, at=utcnow() - timedelta(hours=2))
    await store.seed.link(student, await store.seed.guardian("Maria"))
    sweeps = PickupSweeps(store.sessions, store.settings.pickup, store.kicker)
    result = await sweeps.fire_timer(TimerInput(kind=TimerKind.READY, entity_id=student.id,
                                                version=student.version, deadline=utcnow()))
    assert result.changed
    assert [m for _, m, _ in await _notes(store, "pickup-reverted")] == [
        "A retirada de Ana foi revertida: tempo de prontidão esgotado."]
    assert store.kicker.notifications == 1


async def test_an_approved_early_release_is_announced_once(store):
    student, _, _ = await _family(store)
    release = await store.seed.add(EarlyRelease(student_id=student.id,
                                                valid_until=utcnow() + timedelta(days=1)))
    await store.pickup.authorizations.decide_release(
        release_id=release.id, decision="request-adjustments", version=0, actor="secretaria")
    assert await _notes(store, "early-release-approved") == []
    assert store.kicker.notifications == 0
    await store.pickup.authorizations.decide_release(
        release_id=release.id, decision="approve", version=1, actor="secretaria")
    assert {m for _, m, _ in await _notes(store, "early-release-approved")} == {
        "A saída antecipada de Ana foi aprovada pela escola."}
    assert len(await _notes(store, "early-release-approved")) == 2
    assert store.kicker.notifications == 1
