"""The queue snapshots are read (the status page's chart) and pruned after the retention."""

from __future__ import annotations

import re
from datetime import timedelta

from activities.pickup.contracts.board import RunSweepInput, Sweep
from activities.pickup.models import QueueSnapshot
from activities.pickup.queue_chart import Point, queue_svg
from shared.db.models import utcnow


def _points(svg: str, css: str) -> list[tuple[float, float]]:
    coords = re.search(rf'class="{css}"[^>]* points="([^"]*)"', svg).group(1)
    return [(float(x), float(y)) for x, y in (pair.split(",") for pair in coords.split())]


def test_the_chart_scales_pending_and_failed_over_the_period():
    now = utcnow()
    since = now - timedelta(hours=24)
    svg = queue_svg("ledger", [Point(since, 0, 0), Point(since + timedelta(hours=12), 10, 5),
                               Point(now, 4, 10)], since=since, until=now)
    pending, failed = _points(svg, "pending"), _points(svg, "failed")
    assert [x for x, _ in pending] == [24.0, 240.0, 456.0]  # start, middle, end of the width
    assert pending[1][1] == failed[2][1] == 24.0  # the top is the period's maximum (10)
    assert pending[0][1] == failed[0][1] == 96.0  # zero sits on the axis
    assert "4 pending and 10 failed now; at most 10 pending and 10 failed" in svg
    assert 'role="img"' in svg and "<title" in svg
    empty = queue_svg("notifications", [], since=since, until=now)
    assert "<polyline" not in empty and "no snapshot since" in empty


async def test_the_status_page_series_reads_the_last_day_per_queue(store):
    now = utcnow()
    await store.seed.add(*[QueueSnapshot(at=now - timedelta(hours=h), queue="ledger",
                                         pending=h, failed=0, oldest_pending_seconds=0)
                           for h in (30, 20, 10, 1)])
    charts = dict(await store.pickup.queues.charts(now=now))
    assert list(charts) == ["ledger", "notifications"]
    assert len(_points(charts["ledger"], "pending")) == 3  # the 30-hour-old point is not drawn
    assert "<polyline" not in charts["notifications"]


async def test_the_snapshot_sweep_prunes_points_past_the_retention(store):
    now = utcnow()
    days = store.settings.pickup.queue_snapshot_retention_days
    old, kept = await store.seed.add(
        QueueSnapshot(at=now - timedelta(days=days, minutes=1), queue="ledger", pending=1,
                      failed=0, oldest_pending_seconds=0),
        QueueSnapshot(at=now - timedelta(days=days, minutes=-1), queue="ledger", pending=2,
                      failed=0, oldest_pending_seconds=0))
    await store.sweeps.queue_snapshot(RunSweepInput(sweep=Sweep.QUEUE_SNAPSHOT, now=now))
    left = {s.id for s in await store.seed.all(QueueSnapshot)}
    assert old.id not in left and kept.id in left
    assert len(left) == 3  # the kept point and the two new ones
