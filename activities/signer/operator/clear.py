"""Clear Jobs: every job, its files and the events before it, gone; one event says so."""

from __future__ import annotations

import asyncio
import logging
import shutil
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import delete, update
from sqlmodel import select

from activities.signer.models.jobs import Job, JobHistory
from activities.signer.storage import StorageTree
from shared.db.engine import Sessions
from shared.db.models import OperationalEvent, utcnow
from shared.errors import ErrorCode, EsteiraError

log = logging.getLogger("esteira.signer.clear")


@dataclass
class ClearResult:
    """What Clear Jobs removed (the seed's answer to `DELETE /api/jobs`)."""

    deleted: int = 0
    files_deleted: int = 0
    folders_deleted: int = 0
    events_deleted: int = 0
    items_failed: int = 0

    @property
    def message(self) -> str:
        """`Cleared N job record(s), F file(s), D folder(s) and E operational event(s).`"""
        text = (f"Cleared {self.deleted} job record(s), {self.files_deleted} file(s), "
                f"{self.folders_deleted} folder(s) and {self.events_deleted} operational event(s).")
        if self.items_failed:
            text += f" {self.items_failed} file(s) or folder(s) could not be deleted."
        return text


async def clear_jobs(sessions: Sessions, storage: StorageTree, *,
                     actor: str) -> ClearResult:
    """Files first (best effort, item by item), then every row and older event in one go."""
    if not storage.root.is_dir():
        raise EsteiraError(ErrorCode.STORE_UNAVAILABLE,
                           f"The storage root {storage.root} can't be reached; nothing deleted.")
    started = utcnow()
    async with sessions() as session:
        snapshot = (await session.exec(select(Job.id, Job.original_path, Job.output_path))).all()
    result = ClearResult()
    await asyncio.to_thread(_sweep_files, storage, snapshot, result)
    async with sessions() as session:
        # Retry chains point at their parents; unlink them so the self-reference can't block.
        await session.exec(update(Job).values(parent_job_id=None))
        await session.exec(delete(JobHistory))
        result.deleted = (await session.exec(delete(Job))).rowcount or 0
        result.events_deleted = (await session.exec(
            delete(OperationalEvent).where(OperationalEvent.at < started))).rowcount or 0
        session.add(OperationalEvent(
            domain="signer", type="JobsCleared", actor=actor,
            message=f"Jobs cleared by {actor}. {result.message}",
            properties={"deleted": result.deleted, "filesDeleted": result.files_deleted,
                        "foldersDeleted": result.folders_deleted,
                        "eventsDeleted": result.events_deleted,
                        "itemsFailed": result.items_failed}))
        await session.commit()
    log.warning("Jobs cleared by %s: %s", actor, result.message)
    return result


def _sweep_files(storage: StorageTree, snapshot, result: ClearResult) -> None:
    for job_id, original_path, output_path in snapshot:
        # Inputs are deleted without the fingerprint comparison: this is an order to empty.
        for file in (original_path, output_path):
            if file:
                _remove(Path(file), result)
        for folder in (storage.staging_dir(job_id), storage.error / job_id):
            _remove(folder, result)


def _remove(path: Path, result: ClearResult) -> None:
    try:
        if path.is_dir():
            shutil.rmtree(path)
            result.folders_deleted += 1
        elif path.exists():
            path.unlink()
            result.files_deleted += 1
    except OSError as exc:
        result.items_failed += 1
        log.warning("Clear Jobs could not delete %s: %s", path, exc)
