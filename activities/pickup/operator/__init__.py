"""The pickup domain's face: every operation a door (REST, gRPC, dashboard) may call, and the
values those operations take and return."""

from __future__ import annotations

from activities.pickup.operator.day import DayClosure
from activities.pickup.operator.events import Feed, FeedKey
from activities.pickup.operator.face import PickupOperations
from activities.pickup.operator.guardian_page import GuardianView, LinkRequest, PageSession
from activities.pickup.operator.listing import RecordFilter
from activities.pickup.operator.queues import Backlog, OutboxPage
from activities.pickup.operator.reports import CsvPart, DismissalReport
from activities.pickup.operator.roster import RosterReport

__all__ = ["Backlog", "CsvPart", "DayClosure", "DismissalReport", "Feed", "FeedKey",
           "GuardianView", "LinkRequest", "OutboxPage", "PageSession", "PickupOperations",
           "RecordFilter", "RosterReport"]
