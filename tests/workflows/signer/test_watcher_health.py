"""The watcher's record of its folder: every pass moves lastScanAt (the heartbeat), and a folder
that can't be listed at start-up reads Unavailable with its error until it can."""

from __future__ import annotations

import asyncio
import shutil

from activities.signer.contracts.jobs import FolderStatus
from activities.signer.crypto.samples import make_pdf
from activities.signer.enqueue import EnqueueResult, Outcome
from activities.signer.models.jobs import InputFolderState
from services.watcher.folder import ENQUEUE_BATCH
from tests.workflows.signer.test_watcher import _count, _eventually, _watcher, running


async def _row(signer) -> InputFolderState | None:
    async with signer.sessions() as session:
        return await session.get(InputFolderState, "inbox")


async def _folder(signer):
    [inbox] = [f for f in (await signer.face.folders.overview()).folders if f.name == "inbox"]
    return inbox


async def test_every_pass_moves_last_scan_at_though_the_status_stays_running(signer):
    async with running(_watcher(signer)):
        first = await _eventually(lambda: _row(signer))
        assert first.status == "Running"

        async def moved():
            row = await _row(signer)
            return row if row.last_scan_at > first.last_scan_at else None

        later = await _eventually(moved, timeout=5)
    assert later.status == "Running", "the status never changed: the pass alone moved it"
    assert (await _folder(signer)).status is FolderStatus.RUNNING


async def test_a_folder_missing_at_start_up_reads_unavailable_and_recovers_once_listable(
        signer):
    shutil.rmtree(signer.inbox)
    async with running(_watcher(signer)) as watcher:
        async def unavailable():
            row = await _row(signer)
            return row if row is not None and row.status == "Unavailable" else None

        row = await _eventually(unavailable)
        assert row.last_error == f"{signer.inbox} can't be listed: No such file or directory"
        inbox = await _folder(signer)
        assert (inbox.status, inbox.last_error) == (FolderStatus.UNAVAILABLE, row.last_error)
        first = row.last_scan_at
        await asyncio.sleep(0.5)
        again = await _row(signer)
        assert again.status == "Unavailable" and again.last_scan_at > first, \
            "retried every pass, each pass recorded"

        signer.inbox.mkdir()
        signer.drop("late.pdf", make_pdf())
        [job] = await _eventually(lambda: _count(signer, 1))
        assert watcher.status is FolderStatus.RUNNING
    assert job.file_name == "late.pdf" and job.folder == "inbox"
    assert (await _row(signer)).status == "Running"


class _SlowEnqueuer:
    """Takes `seconds` per file (a slow workflow start); `release` unset: hangs for ever."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.calls = 0
        self.release = asyncio.Event()

    async def enqueue(self, *args, **kwargs) -> EnqueueResult:
        self.calls += 1
        if self.seconds is None:
            await self.release.wait()
        else:
            await asyncio.sleep(self.seconds)
        return EnqueueResult(Outcome.ALREADY_ACTIVE)


async def test_a_long_burst_keeps_recording_passes_so_a_busy_watcher_never_reads_silent(
        signer):
    slow = _SlowEnqueuer(0.6)
    for n in range(3 * ENQUEUE_BATCH):
        signer.drop(f"b{n}.pdf", make_pdf(500))
    seen: set = set()
    async with running(_watcher(signer, enqueuer=slow)):
        await _eventually(lambda: _positive(slow.calls))
        # Three batches of 0.6 s each: one tick of the stability check, over 1.8 s.
        while slow.calls < 3 * ENQUEUE_BATCH:
            seen.add((await _row(signer)).last_scan_at)
            await asyncio.sleep(0.05)
    assert len(seen) >= 2, "the pass was recorded again between the burst's batches"


async def test_a_folder_whose_watcher_hangs_in_a_live_process_reads_no_signal(signer):
    # The bound as the readers compute it: max(3 passes of 0.2 s, 1 s).
    signer.settings.pipeline.poll_interval_seconds = 0.2
    signer.settings.readiness.poller_stale_seconds = 1.0
    hung = _SlowEnqueuer(None)
    async with running(_watcher(signer, enqueuer=hung)):
        try:
            await _eventually(lambda: _is(signer, FolderStatus.RUNNING))
            signer.drop("stuck.pdf", make_pdf(500))
            await _eventually(lambda: _positive(hung.calls))
            inbox = await _eventually(lambda: _is(signer, FolderStatus.NO_SIGNAL), timeout=5)
            assert "no watcher has scanned this folder" in inbox.last_error
        finally:
            hung.release.set()  # else the watcher never returns to see its stop
        await _eventually(lambda: _is(signer, FolderStatus.RUNNING), timeout=5)


async def _is(signer, status: FolderStatus):
    inbox = await _folder(signer)
    return inbox if inbox.status is status else None


async def _positive(value: int) -> bool:
    return value > 0
