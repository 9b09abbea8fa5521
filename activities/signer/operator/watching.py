"""What the watcher asks of the signer: files become jobs, diverged inputs come back, lost
workflow starts are made again, Lacuna Signer folders are scanned."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlmodel import select

from activities.signer import engine
from activities.signer.contracts.jobs import JobSource
from activities.signer.enqueue import Enqueuer, EnqueueResult
from activities.signer.key_files import allowed_key_directories
from activities.signer.lacuna.client import LacunaClient
from activities.signer.lacuna.discovery import SignerFolderScanner, run_scans
from activities.signer.models.jobs import SigningProfile
from activities.signer.repository import JobRepository
from shared.db.models import OperationalEvent
from shared.settings import Settings

DIVERGED = "InputDiverged"


@dataclass(frozen=True)
class DivergedInput:
    """An input that changed mid-job (an `InputDiverged` event), to hand back to its folder."""

    event_id: int
    folder: str | None
    path: str | None


class SignerWatching:
    """The watcher's calls into the signer."""

    def __init__(self, settings: Settings, repository: JobRepository,
                 enqueuer: Enqueuer) -> None:
        self._settings = settings
        self._repository = repository
        self._sessions = repository.sessions
        self._enqueuer = enqueuer

    async def take(self, path: Path, *, profile: SigningProfile, folder: str) -> EnqueueResult:
        """A stable file the watcher found in `folder`, owned by `profile`."""
        return await self._enqueuer.enqueue(path, source=JobSource.WATCHER, profile=profile,
                                            folder=folder)

    async def start_lost_workflows(self, created_before: datetime) -> int:
        """Start the workflow of every Queued job whose start was never confirmed (Temporal
        was down then); starting twice is harmless (the workflow id deduplicates)."""
        job_ids = await self._repository.unstarted_queued(created_before)
        for job_id in job_ids:
            await self._enqueuer.start_workflow(job_id)
        return len(job_ids)

    async def last_event_id(self) -> int:
        """The newest event's id (0 with none): diverged inputs are read from after it."""
        async with self._sessions() as session:
            return (await session.exec(select(OperationalEvent.id).order_by(
                OperationalEvent.id.desc()).limit(1))).first() or 0

    async def diverged_since(self, cursor: int) -> list[DivergedInput]:
        """Inputs that diverged after event `cursor`, oldest first."""
        async with self._sessions() as session:
            rows = (await session.exec(select(OperationalEvent).where(
                OperationalEvent.id > cursor, OperationalEvent.type == DIVERGED)
                .order_by(OperationalEvent.id))).all()
        return [DivergedInput(row.id or 0, (row.properties or {}).get("folder"),
                              (row.properties or {}).get("path")) for row in rows]

    @contextlib.asynccontextmanager
    async def signer_folder_scans(self, stop: asyncio.Event,
                                  held: Callable[[], bool] = lambda: False
                                  ) -> AsyncIterator[list[Coroutine[Any, Any, None]]]:
        """The scan loops of Lacuna Signer folders (input folders of another kind; none when
        `Signer:*` isn't configured); the client closes after. `held` (the instance's
        stand-down) skips scans while true."""
        settings = self._settings
        lacuna = LacunaClient.from_settings(settings)
        # A SignerFolder scan opens the holder's key (a token's module only if configured).
        engine.allow_pkcs11_modules(settings.signing.pkcs11_modules)
        engine.allow_key_directories(allowed_key_directories(settings))
        scans = [run_scans(SignerFolderScanner(self._repository, self._enqueuer, lacuna), stop,
                           settings.signer.folder_scan_interval_seconds, held)] \
            if settings.signer.configured else []
        async with lacuna.http:
            yield scans
