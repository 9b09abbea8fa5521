"""Each folder watcher's status row (`input_folder_state`), read by readiness and the API."""

from __future__ import annotations

import logging

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.operator.metrics import FOLDER_STATUS
from shared.contracts.signer import FolderStatus
from shared.db.models import utcnow
from shared.db.signer_models import InputFolderState

log = logging.getLogger("esteira.watcher")


class FolderStateStore:
    """Upserts the status row; a store outage never stops a watcher."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.sessions = sessions

    async def save(self, name: str, status: FolderStatus, error: str | None,
                   failures: int) -> None:
        """Record the folder's status, last error and failure count."""
        for each in FolderStatus:
            FOLDER_STATUS.labels(folder=name, status=each.value).set(1 if each is status else 0)
        try:
            async with self.sessions() as session:
                row = await session.get(InputFolderState, name) or InputFolderState(
                    name=name, status=status.value)
                row.status = status.value
                row.consecutive_failures = failures
                if error is not None or status is FolderStatus.RUNNING:
                    row.last_error = error if error is not None else row.last_error
                row.last_scan_at = row.updated_at = utcnow()
                session.add(row)
                await session.commit()
        except Exception as exc:
            log.warning("Could not record the state of folder %s: %s", name, exc)
