"""`PickupOperations`: the pickup board as every door sees it."""

from __future__ import annotations

from datetime import timedelta

from activities.pickup.kick import Kicker
from shared.db.engine import Sessions
from shared.settings import Settings
from shared.temporal import TemporalHandle


class PickupOperations:
    """The board's operations, built once per process by the composition root.

    It holds what every operation shares: the store, the one kicker that starts the Temporal
    work a committed change leaves, and the READY timeout (`IONCLASS_READY_TIMEOUT_MINUTES`).
    """

    def __init__(self, settings: Settings, sessions: Sessions, temporal: TemporalHandle) -> None:
        self.settings = settings
        self.sessions = sessions
        self.temporal = temporal
        self.kicker = Kicker(settings.pickup, temporal)
        self.ready_timeout = timedelta(minutes=settings.pickup.ready_timeout_minutes)
