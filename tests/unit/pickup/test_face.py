"""The pickup face: built once without I/O, one kicker and one READY timeout for every topic."""

from __future__ import annotations

from datetime import timedelta

from activities.pickup.kick import Kicker
from activities.pickup.operator import PickupOperations
from shared.db.engine import create_engine, session_factory
from shared.temporal import TemporalHandle
from tests.support.pickup import pickup_settings


async def test_every_topic_shares_the_faces_one_kicker_and_ready_timeout(tmp_path):
    settings = pickup_settings(tmp_path, f"sqlite:///{tmp_path}/face.db",
                               ready_timeout_minutes=42)
    connects = []

    async def connector():
        connects.append(1)
        raise AssertionError("building the face must not connect")

    engine = create_engine(settings.sqlalchemy_url)
    try:
        pickup = PickupOperations(settings, session_factory(engine), TemporalHandle(connector))
        assert isinstance(pickup.kicker, Kicker) and connects == []
        assert pickup.ready_timeout == timedelta(minutes=42)
        topics = [value for value in vars(pickup).values() if hasattr(value, "_kicker")]
        assert len(topics) >= 10
        assert all(topic._kicker is pickup.kicker for topic in topics)
        timed = [t for t in vars(pickup).values() if hasattr(t, "_ready_timeout")]
        assert {t._ready_timeout for t in timed} == {timedelta(minutes=42)} and len(timed) >= 3
    finally:
        await engine.dispose()
