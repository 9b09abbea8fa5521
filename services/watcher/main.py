"""Run one observer per input folder, hand diverged inputs back, keep every Queued job started."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta
from pathlib import Path

from sqlmodel import select

from activities.signer import engine as engine_module
from activities.signer.enqueue import Enqueuer
from activities.signer.lacuna.client import LacunaClient
from activities.signer.lacuna.discovery import SignerFolderScanner, run_scans
from activities.signer.repository import JobRepository
from activities.signer.storage import StorageTree
from services.process import connect_when_available, stop_event
from services.watcher.folder import FolderWatcher
from services.watcher.state import FolderStateStore
from shared.db.engine import create_engine, session_factory
from shared.db.models import OperationalEvent, utcnow
from shared.instances import registered_instance
from shared.settings import Settings

# A Queued row whose workflow start was lost (Temporal down at that moment) is started again
# after this long; starting twice is harmless (the workflow id deduplicates).
ORPHAN_QUEUED_AFTER = timedelta(seconds=30)
log = logging.getLogger("esteira.watcher")


async def run_watcher(settings: Settings) -> None:
    """Watch every configured input folder until SIGINT/SIGTERM."""
    stop = stop_event()
    engine = create_engine(settings.sqlalchemy_url)
    sessions = session_factory(engine)
    try:
        client = await connect_when_available(settings, stop)
        if client is None:
            return
        repository = JobRepository(sessions)
        storage = StorageTree(settings.storage_root)
        enqueuer = Enqueuer.from_settings(repository, storage, client, settings)
        states = FolderStateStore(sessions)
        watchers = {
            folder.name: FolderWatcher(
                folder, settings.input_folder_path(folder), enqueuer=enqueuer,
                repository=repository, states=states,
                stability_seconds=settings.pipeline.stability_window_seconds,
                poll_seconds=settings.pipeline.poll_interval_seconds,
                max_failures=settings.pipeline.max_consecutive_enqueue_failures)
            for folder in settings.effective_inputs
        }
        lacuna = LacunaClient.from_settings(settings)
        # A SignerFolder scan opens the holder's key (a token's module only if configured).
        engine_module.allow_pkcs11_modules(settings.signing.pkcs11_modules)
        # Signer folders are input folders of another kind: the watcher discovers them too.
        scans = [run_scans(SignerFolderScanner(repository, enqueuer, lacuna), stop,
                           settings.signer.folder_scan_interval_seconds)] \
            if settings.signer.configured else []
        async with registered_instance(sessions, "watcher"), lacuna.http:
            log.info("Watching %s folder(s): %s", len(watchers), ", ".join(watchers))
            await asyncio.gather(
                *(watcher.run(stop) for watcher in watchers.values()),
                _hand_back_diverged(sessions, watchers, stop, settings),
                _start_orphaned_queued(repository, enqueuer, stop), *scans)
    finally:
        await engine.dispose()


async def _hand_back_diverged(sessions, watchers: dict[str, FolderWatcher], stop: asyncio.Event,
                              settings: Settings) -> None:
    """Offer each input that diverged mid-job back to its folder's watcher (after the job ends,
    since the event is written with the job's terminal transition)."""
    async with sessions() as session:
        cursor = (await session.exec(select(OperationalEvent.id).order_by(
            OperationalEvent.id.desc()).limit(1))).first() or 0
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), settings.pipeline.poll_interval_seconds)
        try:
            async with sessions() as session:
                events = (await session.exec(select(OperationalEvent).where(
                    OperationalEvent.id > cursor, OperationalEvent.type == "InputDiverged")
                    .order_by(OperationalEvent.id))).all()
        except Exception as exc:
            log.warning("Could not read diverged inputs: %s", exc)
            continue
        for event in events:
            cursor = max(cursor, event.id or 0)
            folder, path = event.properties.get("folder"), event.properties.get("path")
            watcher = watchers.get(folder or "")
            if watcher is None or watcher.status.value != "Running":
                log.warning("Diverged input %s not handed back: %s", path,
                            "it came from an upload" if not folder
                            else f"no watcher is running for folder {folder}")
                continue
            watcher.offer(Path(path))


async def _start_orphaned_queued(repository: JobRepository, enqueuer: Enqueuer,
                                 stop: asyncio.Event) -> None:
    """Make sure every Queued job has its workflow."""
    while not stop.is_set():
        try:
            for job_id in await repository.unstarted_queued(utcnow() - ORPHAN_QUEUED_AFTER):
                await enqueuer.start_workflow(job_id)
        except Exception as exc:
            log.warning("Could not check Queued jobs for their workflows: %s", exc)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), ORPHAN_QUEUED_AFTER.total_seconds())
