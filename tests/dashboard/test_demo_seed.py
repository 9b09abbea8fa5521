"""The first run's demo: each system seeded once (a second run adds nothing), never outside
Development, and off with `Demo:Enabled = false`."""

from __future__ import annotations

import uuid

import pytest
from sqlmodel import func, select

from activities.pickup.models import Guardian, GuardianLink, School, Student
from services.dev.demo import DEMO_FILE, DEMO_NOTICES, demo_rows, seed_demo
from tests.api.conftest import make_context


class Hub:
    """The notices the demo sends, answered as the gateway would (a redelivery: 200)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int, str]] = []

    async def __call__(self, order_id: str, revision: int, webhook_id: str) -> int:
        self.seen.append((order_id, revision, webhook_id))
        return 200


async def _counts(sessions) -> dict[str, int]:
    async with sessions() as session:
        return {model.__name__: (await session.exec(select(func.count()).select_from(
            model))).one() for model in (School, Student, Guardian, GuardianLink)}


@pytest.mark.parametrize("backend", ["sqlite"])
async def test_the_demo_seeds_each_system_once_and_a_restart_adds_nothing(settings,
                                                                          temporal_env):
    settings.pipeline.task_queue_suffix = f"-demo-{uuid.uuid4().hex[:8]}"
    context = await make_context(settings, temporal_env)
    hub = Hub()
    try:
        first = await seed_demo(settings, context.faces, send=hub)
        assert first is not None
        assert first.dropped and first.dropped[0].endswith(DEMO_FILE)
        assert first.pickup == ["DEMO-001 AWAITING", "DEMO-002 AWAITING", "DEMO-002 READY",
                                "DEMO-003 AWAITING", "DEMO-003 READY"]
        seeded = await _counts(context.sessions)
        assert seeded == {"School": 1, "Student": 3, "Guardian": 2, "GuardianLink": 2}
        again = await seed_demo(settings, context.faces, send=hub)
        assert again is not None and again.dropped == [] and again.pickup == []
        assert await _counts(context.sessions) == seeded
        # The same webhook-ids both times: the gateway records each delivery once.
        ids = [webhook_id for _order, _revision, webhook_id in hub.seen]
        assert ids == [w for _o, w in DEMO_NOTICES] * 2
        inbox = settings.input_folder_path(settings.effective_inputs[0])
        assert [p.name for p in inbox.iterdir()] == [DEMO_FILE]
    finally:
        await context.engine.dispose()


@pytest.mark.parametrize("backend", ["sqlite"])
@pytest.mark.parametrize(("environment", "enabled"), [("Production", True),
                                                      ("Staging", True),
                                                      ("Development", False)])
async def test_the_demo_never_runs_in_production_and_turns_off(settings, temporal_env,
                                                               environment, enabled):
    context = await make_context(settings, temporal_env)
    settings.environment = environment
    settings.demo.enabled = enabled
    hub = Hub()
    try:
        assert await seed_demo(settings, context.faces, send=hub) is None
        assert hub.seen == []
        assert await _counts(context.sessions) == {"School": 0, "Student": 0, "Guardian": 0,
                                                   "GuardianLink": 0}
        inbox = settings.input_folder_path(settings.effective_inputs[0])
        assert not (inbox / DEMO_FILE).exists()
    finally:
        await context.engine.dispose()


def test_the_banner_names_the_pages_to_open_for_each_system(settings):
    rows = dict(demo_rows(settings))
    assert set(rows) == {"open: signer", "open: sisbajud", "open: pickup"}
    assert "/jobs" in rows["open: signer"] and "/sisbajud/orders/" in rows["open: sisbajud"]
    assert "/pickup" in rows["open: pickup"]
