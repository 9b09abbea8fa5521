"""The signer's face (`SignerOperations`) and the values its operations take and return: what
every door (REST, gRPC, dashboard, watcher, CLI) imports of the signer."""

from __future__ import annotations

from activities.signer.approvals.decisions import Approver
from activities.signer.enqueue import EnqueueResult, Outcome
from activities.signer.operator.approvals import ApprovalSnapshot
from activities.signer.operator.clear import ClearResult
from activities.signer.operator.delete_job import DeleteReport
from activities.signer.operator.downloads import JobFile, OpenedFile
from activities.signer.operator.events import EventFilter
from activities.signer.operator.face import SignerOperations
from activities.signer.operator.folders import FolderBinding, FolderOverview
from activities.signer.operator.instances import (
    ClusterView,
    InstanceState,
    InstanceView,
    Processes,
)
from activities.signer.operator.intake import RescanReport, RescanRow, RescanTotals
from activities.signer.operator.jobs import JobDetail, JobFilter
from activities.signer.operator.outputs import DecryptFailed
from activities.signer.operator.pipeline_control import PipelineView, Poller, Pollers
from activities.signer.operator.profiles_admin import ProfileView
from activities.signer.operator.transitions import TransitionTail
from activities.signer.operator.watching import DivergedInput

__all__ = [
    "ApprovalSnapshot", "Approver", "ClearResult", "ClusterView", "DecryptFailed",
    "DeleteReport", "DivergedInput", "EnqueueResult", "EventFilter", "FolderBinding",
    "FolderOverview", "InstanceState", "InstanceView", "JobDetail", "JobFile", "JobFilter",
    "OpenedFile", "Outcome",
    "PipelineView", "Poller", "Pollers", "Processes", "ProfileView", "RescanReport",
    "RescanRow", "RescanTotals", "SignerOperations", "TransitionTail",
]
