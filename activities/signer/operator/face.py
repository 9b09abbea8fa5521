"""`SignerOperations`: the bulk signer as every door sees it."""

from __future__ import annotations

from activities.signer.repository import JobRepository
from activities.signer.storage import StorageTree
from shared.db.engine import Sessions
from shared.settings import Settings
from shared.temporal import TemporalHandle


class SignerOperations:
    """The signer's operations, built once per process by the composition root.

    It holds what every operation shares: one repository, one storage tree, one enqueuer
    (so its coalescing spans every upload, rescan and retry of the process) and the
    process's one Temporal handle.
    """

    def __init__(self, settings: Settings, sessions: Sessions, temporal: TemporalHandle) -> None:
        self.settings = settings
        self.sessions = sessions
        self.temporal = temporal
        self.repository = JobRepository(sessions)
        self.storage = StorageTree(settings.storage_root)
