"""Clear Jobs: every job, its files and the events before it, gone; one event says so."""

from __future__ import annotations

import asyncio
import logging
import shutil
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import delete, update
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.storage import StorageTree
from shared.db.models import OperationalEvent, utcnow
from shared.db.signer_models import Job, JobHistory
from shared.errors import ErrorCode, EsteiraError

log = logging.getLogger("esteira.signer.clear")


@dataclass
class ClearResult:
    """The seed's answer to `DELETE /api/jobs`."""

    deleted: int = 0
    filesDeleted: int = 0  # the seed's JSON names
    foldersDeleted: int = 0
    eventsDeleted: int = 0
    itemsFailed: int = 0

    @property
    def message(self) -> str:
        """`Cleared N job record(s), F file(s), D folder(s) and E operational event(s).`"""
        text = (f"Cleared {self.deleted} job record(s), {self.filesDeleted} file(s), "
                f"{self.foldersDeleted} folder(s) and {self.eventsDeleted} operational event(s).")
        if self.itemsFailed:
            text += f" {self.itemsFailed} file(s) or folder(s) could not be deleted."
        return text


async def clear_jobs(sessions: async_sessionmaker[AsyncSession], storage: StorageTree, *,
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
        result.eventsDeleted = (await session.exec(
            delete(OperationalEvent).where(OperationalEvent.at < started))).rowcount or 0
        session.add(OperationalEvent(
            domain="signer", type="JobsCleared", actor=actor,
            message=f"Jobs cleared by {actor}. {result.message}",
            properties={"deleted": result.deleted, "filesDeleted": result.filesDeleted,
                        "foldersDeleted": result.foldersDeleted,
                        "eventsDeleted": result.eventsDeleted,
                        "itemsFailed": result.itemsFailed}))
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
            result.foldersDeleted += 1
        elif path.exists():
            path.unlink()
            result.filesDeleted += 1
    except OSError as exc:
        result.itemsFailed += 1
        log.warning("Clear Jobs could not delete %s: %s", path, exc)
