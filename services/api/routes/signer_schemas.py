"""The signer's REST bodies: camelCase on the wire (the seed's names), built from what the
face returns. Times are ISO 8601 strings in UTC."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from activities.signer.contracts.jobs import FolderStatus, JobStatus
from activities.signer.models.jobs import Job, JobHistory
from activities.signer.operator import (
    ClearResult,
    FolderBinding,
    PipelineView,
    ProfileView,
    RescanReport,
)
from activities.signer.operator import JobDetail as JobRecord
from shared.db.models import OperationalEvent, as_utc
from shared.wire import WireModel


def iso(moment: datetime | None) -> str | None:
    """A stored moment as ISO 8601 in UTC (stores may hand back naive UTC)."""
    return as_utc(moment).isoformat() if moment else None


class ReasonBody(WireModel):
    """An optional reason (pause, cancel), recorded in the events trail or the history."""

    reason: str | None = None


class JobSummary(WireModel):
    """A row of `GET /api/jobs`."""

    id: str
    file_name: str
    status: JobStatus
    format: str | None
    profile: str | None
    folder: str | None
    source: str
    error_code: str | None
    error: str | None
    parent_job_id: str | None
    created_at: str | None = Field(description="ISO 8601, UTC.")
    completed_at: str | None = Field(description="ISO 8601, UTC.")

    @classmethod
    def of(cls, job: Job) -> JobSummary:
        """The row as the list shows it."""
        return cls(**_summary(job))


def _summary(job: Job) -> dict[str, Any]:
    return {"id": job.id, "file_name": job.file_name, "status": job.status,
            "format": job.format, "profile": job.profile_name, "folder": job.folder,
            "source": job.source, "error_code": job.error_code, "error": job.error_message,
            "parent_job_id": job.parent_job_id, "created_at": iso(job.created_at),
            "completed_at": iso(job.completed_at)}


class Timings(WireModel):
    """When a job was queued, started, sent to sign and completed."""

    queued_at: str | None
    started_at: str | None
    signing_started_at: str | None
    completed_at: str | None
    processing_seconds: float | None = None


class HistoryEntry(WireModel):
    """One status change (or note) of a job."""

    at: str | None
    from_: str | None = Field(alias="from")
    to: str | None
    code: str | None
    message: str | None

    @classmethod
    def of(cls, row: JobHistory) -> HistoryEntry:
        """One history row."""
        return cls(at=iso(row.at), from_=row.from_status, to=row.to_status, code=row.code,
                   message=row.message)


class JobDetail(JobSummary):
    """`GET /api/jobs/{id}`: the row plus timeline, family, timings and output."""

    original_path: str | None
    output_path: str | None
    input_size: int | None
    input_sha256: str | None
    instance: str | None
    children: list[str]
    timings: Timings
    history: list[HistoryEntry]

    @classmethod
    def of_detail(cls, detail: JobRecord) -> JobDetail:
        """A job with its history and children."""
        job = detail.job
        return cls(**_summary(job), original_path=job.original_path,
                   output_path=job.output_path, input_size=job.input_size,
                   input_sha256=job.input_sha256, instance=job.instance_id,
                   children=detail.children,
                   timings=Timings(queued_at=iso(job.created_at), started_at=iso(job.started_at),
                                   signing_started_at=iso(job.signing_started_at),
                                   completed_at=iso(job.completed_at),
                                   processing_seconds=detail.processing_seconds),
                   history=[HistoryEntry.of(h) for h in detail.history])


class PipelineState(WireModel):
    """`GET /api/pipeline/state`."""

    paused: bool
    reason: str | None
    changed_by: str | None
    changed_at: str | None

    @classmethod
    def of(cls, view: PipelineView) -> PipelineState:
        """The pause state."""
        return cls(paused=view.paused, reason=view.reason, changed_by=view.changed_by,
                   changed_at=iso(view.changed_at))


class Profile(WireModel):
    """A signing profile without any secret (only where a secret comes from)."""

    name: str
    format: str
    cert_source: str
    pfx_path: str | None
    pfx_password_env: str | None
    pkcs11_module: str | None
    pkcs11_thumbprint: str | None
    pkcs11_pin_env: str | None
    verify: bool
    validate_certificate: bool
    policy: dict[str, Any] | None
    policy_name: str | None
    policy_document: str | None
    policy_digest: str | None
    effective_policy: str
    encrypt: bool
    enabled: bool
    input_folder: str | None
    development: bool
    approval: dict[str, Any] | None
    check_cnab240_payment_dates: bool
    method: str
    signers: str
    # KEYLESS: the approvers sign at the Lacuna Signer; no key is held or opened.
    keyless: bool
    # Levels: the TSAs and the cloud credential by address and variable name only.
    signature_level: str
    effective_level: str
    timestamp: dict[str, Any] | None
    revocation_timeout_seconds: float
    csc: dict[str, Any] | None

    @classmethod
    def of(cls, view: ProfileView) -> Profile:
        """A profile as the face shows it."""
        row = view.row
        computed = {"development": row.is_dev, "effective_policy": view.effective_policy,
                    "keyless": view.keyless, "effective_level": view.effective_level}
        return cls.model_validate({
            **{name: getattr(row, name) for name in cls.model_fields if name not in computed},
            **computed})


class Folder(WireModel):
    """A row of `GET /api/folders`."""

    name: str
    path: str
    status: FolderStatus = Field(
        description="Running; Starting (just assigned); Unavailable (can't be listed, see "
                    "lastError; retried every pass); Stopped (its watcher gave up); NoSignal "
                    "(no watcher scanned it within the bound: dead, hung or stopped); "
                    "Unassigned (no profile chose it).")
    profile_name: str | None
    last_error: str | None = Field(description="What last troubled its watcher; with "
                                               "NoSignal, how long it has been silent.")
    last_scan_at: str | None = Field(description="When a watcher last passed over it (every "
                                                 "pass, changed or not).")
    instance: str = Field(description="The instance that answered (every one watches every "
                                      "folder).")

    @classmethod
    def of(cls, folder: FolderBinding, instance: str) -> Folder:
        """One configured folder, as `instance` sees it."""
        return cls(name=folder.name, path=str(folder.path), status=folder.status,
                   profile_name=folder.owner, last_error=folder.last_error,
                   last_scan_at=iso(folder.last_scan_at), instance=instance)


class Event(WireModel):
    """A row of `GET /api/events`."""

    id: int
    at: str | None
    domain: str
    type: str
    message: str
    actor: str | None
    properties: dict[str, Any] | None

    @classmethod
    def of(cls, row: OperationalEvent) -> Event:
        """One event of the trail."""
        return cls(id=row.id or 0, at=iso(row.at), domain=row.domain, type=row.type,
                   message=row.message, actor=row.actor, properties=row.properties)


class RescanFolder(WireModel):
    """One folder's counts in a rescan."""

    folder: str
    profile: str | None
    scanned: int
    enqueued: int
    ignored: int
    errors: int
    already_processed: int
    already_active: int
    unassigned: bool
    messages: list[str]


class RescanCounts(WireModel):
    """A rescan's counts summed over its folders, and how many folders no profile chose."""

    scanned: int
    enqueued: int
    ignored: int
    errors: int
    already_processed: int
    already_active: int
    unassigned: int


class RescanAnswer(WireModel):
    """`POST /api/rescan`: per-folder rows and totals."""

    folders: list[RescanFolder]
    totals: RescanCounts

    @classmethod
    def of(cls, report: RescanReport) -> RescanAnswer:
        """The rows and their totals."""
        return cls(folders=[RescanFolder.model_validate(row) for row in report.folders],
                   totals=RescanCounts.model_validate(report.totals))


class Cleared(WireModel):
    """`DELETE /api/jobs`: what was cleared."""

    deleted: int
    files_deleted: int
    folders_deleted: int
    events_deleted: int
    items_failed: int
    message: str

    @classmethod
    def of(cls, result: ClearResult) -> Cleared:
        """Clear Jobs' counts and their one-line summary."""
        return cls.model_validate(result)
