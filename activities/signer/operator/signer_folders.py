"""The watcher's scans of Lacuna Signer folders (input folders of another kind)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from activities.signer import engine
from activities.signer.enqueue import Enqueuer
from activities.signer.lacuna.client import LacunaClient
from activities.signer.lacuna.discovery import SignerFolderScanner, run_scans
from activities.signer.repository import JobRepository
from shared.settings import Settings


@contextlib.asynccontextmanager
async def signer_folder_scans(settings: Settings, repository: JobRepository, enqueuer: Enqueuer,
                              stop: asyncio.Event, held: Callable[[], bool] = lambda: False
                              ) -> AsyncIterator[list[Coroutine[Any, Any, None]]]:
    """The scan loops to run (none when `Signer:*` isn't configured); closes the client after.

    `held` (the instance's stand-down) skips scans while true.
    """
    lacuna = LacunaClient.from_settings(settings)
    # A SignerFolder scan opens the holder's key (a token's module only if configured).
    engine.allow_pkcs11_modules(settings.signing.pkcs11_modules)
    scans = [run_scans(SignerFolderScanner(repository, enqueuer, lacuna), stop,
                       settings.signer.folder_scan_interval_seconds, held)] \
        if settings.signer.configured else []
    async with lacuna.http:
        yield scans
