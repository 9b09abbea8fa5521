"""The SISBAJUD gauges an API process sets from the store at scrape time."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import Gauge

from activities.sisbajud.contracts.orders import HumanDisposition
from activities.sisbajud.gauges import (
    open_decisions,
    orphans_recorded,
    outbox_backlog,
    set_orphans,
    set_outbox,
    set_uncertain,
    uncertain_writes,
)
from activities.sisbajud.metrics import HUMAN_DECISIONS_OPEN
from shared.db.engine import Sessions

# The label of open decisions without a disposition.
NO_DISPOSITION = "NONE"
Publish = Callable[[Gauge, dict[tuple[str, ...], float]], None]


class Gauges:
    """Uncertain writes, outbox depth and age, orphans, open decisions, read from the store."""

    def __init__(self, sessions: Sessions) -> None:
        self._sessions = sessions

    async def refresh(self, publish: Publish) -> None:
        """Set the gauges now (open decisions through `publish`, which drops label sets
        gone since the last scrape)."""
        async with self._sessions() as session:
            uncertain = await uncertain_writes(session)
            depth, oldest = await outbox_backlog(session)
            orphans = await orphans_recorded(session)
            waiting = await open_decisions(session)
        set_uncertain(uncertain)
        set_outbox(depth, oldest)
        set_orphans(orphans)
        decisions = {(each.value,): 0.0 for each in HumanDisposition}
        decisions |= {(disposition or NO_DISPOSITION,): float(count)
                      for disposition, count in waiting.items()}
        publish(HUMAN_DECISIONS_OPEN, decisions)
