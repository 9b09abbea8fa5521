"""`PickupOperations`: the pickup board as every door sees it."""

from __future__ import annotations

from datetime import timedelta

from activities.pickup.kick import Kicker
from activities.pickup.operator.access import GuardianAccess
from activities.pickup.operator.audit import AuditTrail
from activities.pickup.operator.authorizations import PickupAuthorizations
from activities.pickup.operator.board import PickupBoard
from activities.pickup.operator.credentials import PickupCredentials
from activities.pickup.operator.day import SchoolDay
from activities.pickup.operator.events import BoardFeeds
from activities.pickup.operator.guardian_page import GuardianPage
from activities.pickup.operator.ledger import OutboundLedger
from activities.pickup.operator.listing import RecordListing
from activities.pickup.operator.monitor import TurnstileMonitor
from activities.pickup.operator.notifications import NotificationOutbox
from activities.pickup.operator.queues import OutboundQueues
from activities.pickup.operator.records import PickupRecords
from activities.pickup.operator.reports import DismissalReports
from activities.pickup.operator.roster import RosterImport
from activities.pickup.operator.schools import PickupSchools
from activities.pickup.operator.scope import SchoolScope
from shared.db.engine import Sessions
from shared.settings import Settings
from shared.temporal import TemporalHandle


class PickupOperations:
    """The board's operations, built once per process by the composition root.

    It holds what every operation shares: the store, the one kicker that starts the Temporal
    work a committed change leaves, and the READY timeout (`IONCLASS_READY_TIMEOUT_MINUTES`);
    the operations are grouped by topic (`pickup.board.confirm_pickup(...)`).
    """

    def __init__(self, settings: Settings, sessions: Sessions, temporal: TemporalHandle, *,
                 kicker: Kicker | None = None) -> None:
        # `kicker` replaces the Temporal one where a test records the kicks instead.
        self.settings = settings
        self.sessions = sessions
        self.temporal = temporal
        self.kicker = kicker or Kicker(settings.pickup, temporal)
        self.ready_timeout = timedelta(minutes=settings.pickup.ready_timeout_minutes)
        pickup, kick, ready = settings.pickup, self.kicker, self.ready_timeout
        self.board = PickupBoard(sessions, kick, ready)
        self.schools = PickupSchools(sessions, pickup)
        self.records = PickupRecords(sessions, kick)
        self.listing = RecordListing(sessions)
        self.authorizations = PickupAuthorizations(sessions, kick)
        self.access = GuardianAccess(sessions, kick, pickup)
        self.credentials = PickupCredentials(sessions, kick, ready)
        self.scope = SchoolScope(sessions)
        self.roster = RosterImport(sessions, kick, ready, pickup)
        self.day = SchoolDay(sessions, kick)
        self.audit = AuditTrail(sessions)
        self.monitor = TurnstileMonitor(sessions, kick, settings)
        self.notifications = NotificationOutbox(sessions, kick)
        self.ledger = OutboundLedger(sessions, kick)
        self.queues = OutboundQueues(sessions)
        self.feeds = BoardFeeds(sessions)
        self.guardian_page = GuardianPage(sessions, settings)
        self.reports = DismissalReports(sessions)
