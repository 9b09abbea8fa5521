"""Deleting one job: what goes, what stays, and the `JobDeleted` line that says which."""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import delete, func, update
from sqlmodel import select

from activities.signer.approvals.decisions import approvals_summary
from activities.signer.contracts.jobs import ACTIVE_STATUSES, JobSource, JobStatus, SignerErrorCode
from activities.signer.models.jobs import Job, JobHistory
from activities.signer.operator.commands import CANCELABLE, cancel_job
from activities.signer.operator.errors import refuse
from activities.signer.repository import JobRepository
from activities.signer.storage import Fingerprint, StorageTree, fingerprint_of
from shared.db.models import OperationalEvent
from shared.free_text import bounded_reason
from shared.temporal import TemporalHandle


@dataclass
class DeleteReport:
    """What a deletion removed and what it kept (with why)."""

    removed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


async def delete_job(repository: JobRepository, storage: StorageTree, temporal: TemporalHandle,
                     job_id: str, *, actor: str, reason: str | None = None) -> DeleteReport:
    """Remove a job and the files it owns; a running job can't be deleted."""
    reason = bounded_reason(reason)
    job = await repository.get(job_id)
    if job is None:
        raise refuse(SignerErrorCode.JOB_NOT_FOUND, f"No job with id {job_id}.")
    status = job.status
    if status in (JobStatus.PROCESSING, JobStatus.VERIFYING):
        raise refuse(SignerErrorCode.JOB_NOT_QUEUED,
                     f"Job {job_id} is {status}: a running job can't be deleted.")
    if status in CANCELABLE:
        await cancel_job(repository, temporal, job_id, reason="deleting the job", actor=actor)
        status = f"{status}, canceled to delete it"
    report = DeleteReport()
    await asyncio.to_thread(_remove_files, job, storage, report,
                            await _input_still_referenced(repository, job))
    summary = (f"Job {job.id} ('{job.file_name}', {status}) deleted by {actor}. "
               f"Removed: {', '.join(report.removed) or 'nothing'}. "
               f"Kept: {', '.join(report.kept) or 'nothing'}.")
    if approvals := await approvals_summary(repository.sessions, job.id):
        summary += f" {approvals}"
    if reason:
        summary += f" Reason: {reason.rstrip('.')}."
    async with repository.sessions() as session:
        await session.exec(update(Job).where(Job.parent_job_id == job.id)
                           .values(parent_job_id=None))
        await session.exec(delete(JobHistory).where(JobHistory.job_id == job.id))
        await session.exec(delete(Job).where(Job.id == job.id))
        session.add(OperationalEvent(domain="signer", type="JobDeleted", message=summary,
                                     actor=actor, properties={"jobId": job.id,
                                                              "removed": report.removed,
                                                              "kept": report.kept}))
        await session.commit()
    return report


async def _input_still_referenced(repository: JobRepository, job: Job) -> bool:
    async with repository.sessions() as session:
        other = (await session.exec(select(Job.id).where(
            func.lower(Job.original_path) == job.original_path.lower(), Job.id != job.id,
            Job.status.in_([s.value for s in ACTIVE_STATUSES])).limit(1))).first()
    return other is not None


def _remove_files(job: Job, storage: StorageTree, report: DeleteReport,
                  referenced: bool) -> None:
    for folder in (storage.staging_dir(job.id), storage.error / job.id):
        if folder.exists():
            shutil.rmtree(folder, ignore_errors=True)
            report.removed.append(str(folder))
    if job.output_path and Path(job.output_path).exists():
        # Only the file this job recorded writing, never one that merely has the same name.
        Path(job.output_path).unlink()
        report.removed.append(job.output_path)
    source = Path(job.original_path)
    if not source.exists():
        return
    if referenced:
        report.kept.append(f"{source} (another unfinished job uses it)")
    elif job.source == JobSource.UPLOAD:
        source.unlink()
        report.removed.append(str(source))
    elif job.input_sha256 is None or job.input_size is None:
        report.kept.append(f"{source} (never staged by this job)")
    elif _unchanged(source, Fingerprint(job.input_size, job.input_sha256)):
        source.unlink()
        report.removed.append(str(source))
    else:
        report.kept.append(f"{source} (changed since staging or unreadable)")


def _unchanged(source: Path, expected: Fingerprint) -> bool:
    try:
        return fingerprint_of(source) == expected
    except OSError:
        return False
