"""`SignerOperations`: the bulk signer as every door sees it."""

from __future__ import annotations

from activities.signer.enqueue import Enqueuer
from activities.signer.operator.approvals import SignerApprovals
from activities.signer.operator.downloads import SignerDownloads
from activities.signer.operator.events import SignerEvents
from activities.signer.operator.first_boot import SignerSetup
from activities.signer.operator.folders import SignerFolders
from activities.signer.operator.gauges import SignerGauges
from activities.signer.operator.instances import SignerInstances
from activities.signer.operator.intake import SignerIntake
from activities.signer.operator.jobs import SignerJobs
from activities.signer.operator.lacuna_webhook import SignerLacunaWebhook
from activities.signer.operator.outputs import SignerOutputs
from activities.signer.operator.pipeline_control import SignerPipeline
from activities.signer.operator.profiles_admin import SignerProfiles
from activities.signer.operator.watching import SignerWatching
from activities.signer.repository import JobRepository
from activities.signer.storage import StorageTree
from shared.db.engine import Sessions
from shared.settings import Settings
from shared.temporal import TemporalHandle


class SignerOperations:
    """The signer's operations, built once per process by the composition root.

    It holds what every operation shares: one repository, one storage tree, one enqueuer
    (so its coalescing spans every upload, rescan, retry and watcher of the process) and the
    process's one Temporal handle. Nothing connects here. The operations are grouped by
    topic: `signer.jobs.cancel(...)`, `signer.pipeline.pause(...)`, …
    """

    def __init__(self, settings: Settings, sessions: Sessions, temporal: TemporalHandle) -> None:
        self.settings = settings
        self.sessions = sessions
        self.temporal = temporal
        self.repository = JobRepository(sessions)
        self.storage = StorageTree(settings.storage_root)
        self.enqueuer = Enqueuer.from_settings(self.repository, self.storage, temporal, settings)
        self.pipeline = SignerPipeline(settings, sessions, temporal)
        self.jobs = SignerJobs(self.repository, self.storage, self.enqueuer, temporal)
        self.intake = SignerIntake(settings, self.repository, self.enqueuer)
        self.folders = SignerFolders(settings, sessions, self.repository)
        self.profiles = SignerProfiles(settings, sessions)
        self.approvals = SignerApprovals(sessions, temporal)
        self.instances = SignerInstances(settings, sessions)
        self.events = SignerEvents(sessions)
        self.lacuna = SignerLacunaWebhook(settings, sessions, temporal)
        self.watching = SignerWatching(settings, self.repository, self.enqueuer)
        self.outputs = SignerOutputs(settings)
        self.downloads = SignerDownloads(self.repository, self.storage)
        self.setup = SignerSetup(settings, sessions, self.storage)
        self.gauges = SignerGauges(sessions, self.profiles)
