"""One input folder's observer: events (or polling), stability, enqueue, its failure limit."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

import watchfiles

from activities.signer.contracts.jobs import FolderStatus
from activities.signer.models.jobs import SigningProfile
from activities.signer.operator import Outcome, SignerOperations
from services.watcher.stability import StabilityTracker
from shared.logs import props
from shared.settings import InputFolderSettings

log = logging.getLogger("esteira.watcher")
TICK_SECONDS = 0.2
ENQUEUE_BATCH = 16


class FolderWatcher:
    """Watches one folder for the profile that owns it; stops itself after N failures."""

    def __init__(self, folder: InputFolderSettings, path: Path, *, signer: SignerOperations,
                 stability_seconds: float, poll_seconds: float, max_failures: int,
                 held: Callable[[], bool] | None = None) -> None:
        self.folder = folder
        # True while this instance is stood down: files settle here and wait to be enqueued.
        self.held = held or (lambda: False)
        self.path = path
        self.signer = signer
        self.tracker = StabilityTracker(stability_seconds)
        self.poll_seconds = poll_seconds
        self.max_failures = max_failures
        self.failures = 0
        self.status = FolderStatus.STARTING
        # Enqueues fail in parallel: each count is saved under this lock, in the order it was
        # reached, so the stored count is never overtaken by an older one.
        self._saving = asyncio.Lock()
        # The owning profile as last read (once per poll interval, not once per file).
        self._profile: SigningProfile | None = None
        # When the last pass was recorded (monotonic): a long burst records it again.
        self._passed_at = 0.0

    def offer(self, path: Path) -> None:
        """Consider a file (from an event, an enumeration, or a path handed back)."""
        if path.parent == self.path and not self.signer.folders.ignores(self.folder, path.name):
            self.tracker.offer(path, time.monotonic())

    async def run(self, stop: asyncio.Event) -> None:
        """Follow the folder's profile binding and watch while assigned, until stopped.

        Each pass (every poll interval) records the folder's state once, changed or not:
        `last_scan_at` is the watcher's heartbeat, so a dead or hung watcher reads as
        `NoSignal` instead of its last status."""
        events: asyncio.Task[None] | None = None
        try:
            while not stop.is_set() and self.status is not FolderStatus.STOPPED:
                assigned = await self._assigned_now()
                error = None
                if assigned:
                    # Off the loop: a hung mount holds up this folder's pass, not the others.
                    error = await asyncio.to_thread(_listing_error, self.path)
                    if error is not None and events is not None:
                        # Gone or refused mid-run: stop following it until it lists again.
                        await _cancel(events)
                        events = None
                    if error is None and events is None:
                        error = self._enumerate()
                        if error is None:
                            events = asyncio.create_task(self._events(stop))
                elif events is not None:
                    await _cancel(events)
                    events = None
                    log.warning("Folder %s has no profile: its files wait", self.folder.name)
                await self._pass(FolderStatus.UNASSIGNED if not assigned
                                 else FolderStatus.UNAVAILABLE if error is not None
                                 else FolderStatus.RUNNING, error)
                await self._tick_for(self.poll_seconds, stop)
        finally:
            await _cancel(events)

    async def _assigned_now(self) -> bool:
        """Refresh the owning profile; a store hiccup keeps the last answer."""
        try:
            self._profile = await self.signer.folders.profile_for(self.folder.name)
        except Exception as exc:
            log.warning("Folder %s: could not read its profile: %s", self.folder.name, exc)
        return self._profile is not None

    def _enumerate(self) -> str | None:
        """Offer every file already there; why the folder can't be listed, if it can't."""
        try:
            with os.scandir(self.path) as entries:
                for entry in entries:
                    if entry.is_file(follow_symlinks=False):
                        self.offer(Path(entry.path))
        except OSError as exc:
            return _unlistable(self.path, exc)
        return None

    async def _events(self, stop: asyncio.Event) -> None:
        polling = self.folder.polling_interval_seconds
        while not stop.is_set():
            try:
                async for changes in watchfiles.awatch(
                        self.path, stop_event=stop, recursive=False, debounce=50, step=25,
                        force_polling=polling is not None,
                        poll_delay_ms=int((polling or 1) * 1000)):
                    for change, raw in changes:
                        if change is not watchfiles.Change.deleted:
                            self.offer(Path(raw))
            except Exception as exc:  # a vanished mount: count it, retry after a pause
                await self._failed(f"watching {self.path} failed: {exc}")
                await asyncio.sleep(self.poll_seconds)

    async def _tick_for(self, seconds: float, stop: asyncio.Event) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not stop.is_set():
            if self._profile is not None and not self.held():
                ready = self.tracker.ready(time.monotonic())
                # A burst of arrivals is enqueued in parallel batches: each enqueue waits on a
                # workflow start, and one at a time that round trip caps the intake.
                for start in range(0, len(ready), ENQUEUE_BATCH):
                    await asyncio.gather(*(self._enqueue(p)
                                           for p in ready[start:start + ENQUEUE_BATCH]))
                    if self.status is FolderStatus.STOPPED:
                        return
                    await self._keep_beating()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), TICK_SECONDS)

    async def _enqueue(self, path: Path) -> None:
        if path.is_symlink() or not path.is_file():
            return
        profile = self._profile
        if profile is None:
            return
        try:
            result = await self.signer.watching.take(path, profile=profile,
                                                     folder=self.folder.name)
        except Exception as exc:
            await self._failed(f"enqueue of {path.name} failed: {exc}")
            return
        if result.outcome is Outcome.REFUSED:
            await self._failed(f"{path.name}: {result.message}")
            return
        # Success and AlreadyActive (a sibling got there first) both reset the counter.
        self.failures = 0
        if result.outcome is Outcome.SKIPPED:
            log.debug("Not re-enqueued %s: %s", path, result.message)

    async def _failed(self, reason: str) -> None:
        async with self._saving:
            self.failures += 1
            log.warning("Folder %s: %s (%s/%s consecutive failures)", self.folder.name, reason,
                        self.failures, self.max_failures,
                        extra=props(Folder=self.folder.name, Failures=self.failures))
            if self.failures >= self.max_failures:
                if self.status is not FolderStatus.STOPPED:
                    log.critical("Folder %s watcher stopped after %s consecutive failures: %s",
                                 self.folder.name, self.failures, reason)
                self.status = FolderStatus.STOPPED
            await self.signer.folders.record_state(self.folder.name, self.status, reason,
                                                   self.failures)

    async def _pass(self, status: FolderStatus, error: str | None = None) -> None:
        """Record one pass (the heartbeat); a change of status is logged once."""
        async with self._saving:
            if self.status is FolderStatus.STOPPED:
                return  # a failed enqueue stopped it during this pass: that record stands
            if status is not self.status and status is FolderStatus.UNAVAILABLE:
                log.error("Folder %s: %s; retried every %gs", self.folder.name, error,
                          self.poll_seconds)
            elif status is not self.status and self.status is FolderStatus.UNAVAILABLE:
                log.warning("Folder %s can be listed again: watching it", self.folder.name)
            self.status = status
            self._passed_at = time.monotonic()
            await self.signer.folders.record_state(self.folder.name, status, error,
                                                   self.failures)

    async def _keep_beating(self) -> None:
        """Between enqueue batches of a long burst: record the pass again once it is a poll
        interval old, so a busy watcher never reads as a silent one."""
        if time.monotonic() - self._passed_at >= self.poll_seconds:
            await self._pass(self.status)


def _listing_error(path: Path) -> str | None:
    """Why `path` can't be listed (missing, not a folder, refused); None when it can. Opening
    it is the check: no entry is read, so a large folder costs nothing more."""
    try:
        with os.scandir(path):
            return None
    except OSError as exc:
        return _unlistable(path, exc)


def _unlistable(path: Path, exc: OSError) -> str:
    return f"{path} can't be listed: {exc.strerror or exc}"


async def _cancel(task: asyncio.Task | None) -> None:
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
