"""Signer rows and views as `esteira.signer.v1` messages (the REST views' fields, snake_case)."""

from __future__ import annotations

from datetime import UTC, datetime

from google.protobuf.timestamp_pb2 import Timestamp

from activities.signer.models.jobs import Job, JobHistory
from activities.signer.operator import JobDetail, PipelineView
from services.grpc_server.gen.esteira.signer.v1 import signer_pb2
from shared.db.models import as_utc
from shared.errors import ErrorCode, EsteiraError


def timestamp(moment: datetime | None) -> Timestamp | None:
    """A protobuf Timestamp, or None (the field stays unset)."""
    if moment is None:
        return None
    stamp = Timestamp()
    stamp.FromDatetime(as_utc(moment))
    return stamp


def moment(stamp: Timestamp, present: bool) -> datetime | None:
    """The aware datetime of a Timestamp field that was set (INVALID_ARGUMENT past its range)."""
    if not present:
        return None
    try:
        return stamp.ToDatetime(tzinfo=UTC)
    except (ValueError, OverflowError) as exc:  # seconds past year 9999, nanos out of range
        raise EsteiraError(ErrorCode.REQUEST_INVALID, f"A timestamp is not valid: {exc}") from exc


def job(row: Job) -> signer_pb2.Job:
    """A row of ListJobs (REST `job_summary`)."""
    return signer_pb2.Job(
        id=row.id, file_name=row.file_name, status=row.status, format=row.format,
        profile=row.profile_name or "", folder=row.folder or "", source=row.source,
        error_code=row.error_code or "", error=row.error_message or "",
        parent_job_id=row.parent_job_id or "", created_at=timestamp(row.created_at),
        completed_at=timestamp(row.completed_at))


def job_detail(detail: JobDetail) -> signer_pb2.JobDetail:
    """GetJob (REST `job_detail`): the row, its timeline, family, timings and output."""
    row = detail.job
    timings = signer_pb2.Timings(
        queued_at=timestamp(row.created_at), started_at=timestamp(row.started_at),
        signing_started_at=timestamp(row.signing_started_at),
        completed_at=timestamp(row.completed_at))
    if row.completed_at and row.started_at:
        timings.processing_seconds = (as_utc(row.completed_at)
                                      - as_utc(row.started_at)).total_seconds()
    answer = signer_pb2.JobDetail(
        job=job(row), original_path=row.original_path, output_path=row.output_path or "",
        input_sha256=row.input_sha256 or "", instance=row.instance_id or "",
        children=detail.children, timings=timings,
        history=[signer_pb2.HistoryEntry(at=timestamp(h.at), from_status=h.from_status or "",
                                         to_status=h.to_status or "", code=h.code or "",
                                         message=h.message) for h in detail.history])
    if row.input_size is not None:
        answer.input_size = row.input_size
    return answer


def pipeline(view: PipelineView) -> signer_pb2.PipelineState:
    """The pause state (REST `pipeline`)."""
    return signer_pb2.PipelineState(paused=view.paused, reason=view.reason or "",
                                    changed_by=view.changed_by or "",
                                    changed_at=timestamp(view.changed_at))


def transition(row: JobHistory, cursor: str) -> signer_pb2.JobTransition:
    """One recorded transition of WatchJobs."""
    return signer_pb2.JobTransition(
        history_id=row.id, job_id=row.job_id, at=timestamp(row.at),
        from_status=row.from_status or "", to_status=row.to_status or "", code=row.code or "",
        message=row.message, cursor=cursor)
