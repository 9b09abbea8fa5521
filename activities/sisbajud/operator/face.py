"""`SisbajudOperations`: the SISBAJUD executor as every door sees it."""

from __future__ import annotations

from shared.db.engine import Sessions
from shared.settings import Settings
from shared.temporal import TemporalHandle


class SisbajudOperations:
    """The executor's operations, built once per process by the composition root."""

    def __init__(self, settings: Settings, sessions: Sessions, temporal: TemporalHandle) -> None:
        self.settings = settings
        self.sessions = sessions
        self.temporal = temporal
