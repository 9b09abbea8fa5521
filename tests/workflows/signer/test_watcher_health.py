"""The watcher's record of its folder: every pass moves lastScanAt (the heartbeat), and a folder
that can't be listed at start-up reads Unavailable with its error until it can."""

from __future__ import annotations

import asyncio
import shutil

from activities.signer.contracts.jobs import FolderStatus
from activities.signer.crypto.samples import make_pdf
from activities.signer.models.jobs import InputFolderState
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
