"""`SisbajudOperations`: the SISBAJUD executor as every door sees it."""

from __future__ import annotations

import httpx

from activities.sisbajud.operator.actions import Actions
from activities.sisbajud.operator.connections import Connections
from activities.sisbajud.operator.decisions import Decisions
from activities.sisbajud.operator.deliveries import Deliveries
from activities.sisbajud.operator.gauges import Gauges
from activities.sisbajud.operator.routing_documents import RoutingDocuments
from activities.sisbajud.operator.timeline import Timeline
from activities.sisbajud.operator.views import Views
from shared.db.engine import Sessions
from shared.settings import Settings
from shared.temporal import TemporalHandle


class SisbajudOperations:
    """The executor's operations, built once per process by the composition root, grouped by
    topic: `decisions` (human decisions and their resolution), `actions` (requeue,
    acknowledge), `views` (orders, notices, alarms, outbox, orphans, institutions), `timeline` (an
    order's results, writes and decisions; the day's states per hour),
    `routing` (accounting-route documents, preflight), `connections`, `deliveries` (the
    webhook gateway's walk) and `gauges` (the scrape's)."""

    def __init__(self, settings: Settings, sessions: Sessions, temporal: TemporalHandle, *,
                 http: httpx.AsyncClient | None = None) -> None:
        """`http`: the client for the Mensageria and Midaz (a test's simulators); without
        one, the deliveries open theirs on first use and the preflight one per check."""
        self.settings = settings
        self.sessions = sessions
        self.temporal = temporal
        self.decisions = Decisions(sessions, temporal)
        self.actions = Actions(sessions)
        self.views = Views(settings, sessions)
        self.timeline = Timeline(sessions)
        self.routing = RoutingDocuments(settings, sessions, http)
        self.connections = Connections(settings)
        self.deliveries = Deliveries(settings, sessions, http)
        self.gauges = Gauges(sessions)

    async def aclose(self) -> None:
        """Release what the operations opened (the deliveries' HTTP client)."""
        await self.deliveries.aclose()
