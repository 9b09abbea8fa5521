"""Run one observer per input folder, hand diverged inputs back, keep every Queued job started."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from activities.signer.contracts.jobs import FolderStatus
from activities.signer.operator import SignerOperations
from services.composition import compose
from services.ops_server import OpsServer
from services.process import connect_when_available, stop_event
from services.watcher.folder import FolderWatcher
from services.watcher.stand_down import StandDownFollower
from shared.db.engine import create_engine, session_factory
from shared.db.models import utcnow
from shared.instances import cluster_instance_name, registered_instance
from shared.metrics import bridged_runtime
from shared.readiness import store_probe
from shared.settings import Settings
from shared.temporal import TemporalHandle

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
        async with OpsServer(settings, "watcher") as ops, bridged_runtime() as runtime:
            ops.watch(store_probe(engine))
            client = await connect_when_available(settings, stop, runtime)
            if client is None:
                return
            ops.watch_temporal(client)
            faces = compose(settings, sessions, TemporalHandle.of(client))
            await _watch(settings, faces.signer, stop, ops)
    finally:
        await engine.dispose()


async def _watch(settings: Settings, signer: SignerOperations, stop: asyncio.Event,
                 ops: OpsServer) -> None:
    """Every folder's observer and the background loops, until `stop`."""
    stand_down = StandDownFollower(
        signer.sessions, cluster_instance_name(settings.cluster) if settings.cluster.enabled
        else None, settings.pipeline.poll_interval_seconds)
    await stand_down.read()  # a stood-down instance restarts stood down
    watchers = {
        folder.name: FolderWatcher(
            folder, signer.folders.path_of(folder), signer=signer,
            stability_seconds=settings.pipeline.stability_window_seconds,
            poll_seconds=settings.pipeline.poll_interval_seconds,
            max_failures=settings.pipeline.max_consecutive_enqueue_failures,
            held=stand_down.held)
        for folder in signer.folders.configured
    }
    # Signer folders are input folders of another kind: the watcher discovers them too.
    async with registered_instance(signer.sessions, "watcher", settings.cluster), \
            signer.watching.signer_folder_scans(stop, stand_down.held) as scans:
        ops.started()
        log.info("Watching %s folder(s): %s", len(watchers), ", ".join(watchers))
        await asyncio.gather(
            *(watcher.run(stop) for watcher in watchers.values()),
            _hand_back_diverged(signer, watchers, stop, settings.pipeline.poll_interval_seconds),
            _start_orphaned_queued(signer, stop, stand_down.held),
            stand_down.run(stop),
            *scans)


async def _hand_back_diverged(signer: SignerOperations, watchers: dict[str, FolderWatcher],
                              stop: asyncio.Event, every: float) -> None:
    """Offer each input that diverged mid-job back to its folder's watcher (after the job ends,
    since the event is written with the job's terminal transition)."""
    cursor = await signer.watching.last_event_id()
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every)
        try:
            diverged = await signer.watching.diverged_since(cursor)
        except Exception as exc:
            log.warning("Could not read diverged inputs: %s", exc)
            continue
        for each in diverged:
            cursor = max(cursor, each.event_id)
            watcher = watchers.get(each.folder or "")
            if watcher is None or watcher.status is not FolderStatus.RUNNING or not each.path:
                log.warning("Diverged input %s not handed back: %s", each.path,
                            "it came from an upload" if not each.folder
                            else f"no watcher is running for folder {each.folder}")
                continue
            watcher.offer(Path(each.path))


async def _start_orphaned_queued(signer: SignerOperations, stop: asyncio.Event,
                                 held: Callable[[], bool]) -> None:
    """Make sure every Queued job has its workflow (another instance does it while stood down)."""
    while not stop.is_set():
        try:
            if not held():
                await signer.watching.start_lost_workflows(utcnow() - ORPHAN_QUEUED_AFTER)
        except Exception as exc:
            log.warning("Could not check Queued jobs for their workflows: %s", exc)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), ORPHAN_QUEUED_AFTER.total_seconds())
