"""A stood-down watcher asks the Lacuna Signer nothing and starts no workflow."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

from activities.signer.lacuna.discovery import run_scans
from services.watcher.main import _start_orphaned_queued


async def _until(predicate, timeout: float = 5) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition never held"
        await asyncio.sleep(0.01)


class _Scanner:
    def __init__(self) -> None:
        self.scans = 0

    async def scan(self) -> None:
        self.scans += 1


async def test_signer_folder_scans_wait_out_a_stand_down():
    scanner, stood_down, stop = _Scanner(), [True], asyncio.Event()
    task = asyncio.create_task(run_scans(scanner, stop, 0.01, lambda: stood_down[0]))
    try:
        await asyncio.sleep(0.2)  # some twenty rounds
        assert scanner.scans == 0, "a stood-down instance polls the Signer folders"
        stood_down[0] = False
        await _until(lambda: scanner.scans > 0)
    finally:
        stop.set()
        await task


class _Watching:
    """The face's `watching` topic: one lost start to make again each time it is asked."""

    def __init__(self) -> None:
        self.started: list[str] = []

    async def start_lost_workflows(self, _before) -> int:
        self.started.append("job-1")
        return 1


async def _one_round(held: bool) -> _Watching:
    watching, stop = _Watching(), asyncio.Event()
    signer = SimpleNamespace(watching=watching)
    task = asyncio.create_task(_start_orphaned_queued(signer,  # type: ignore[arg-type]
                                                      stop, lambda: held))
    await asyncio.sleep(0.1)  # the first round runs at once; the next is 30 s away
    stop.set()
    await task
    return watching


async def test_lost_queued_starts_are_left_to_a_live_instance_while_stood_down():
    assert (await _one_round(held=True)).started == []
    assert (await _one_round(held=False)).started == ["job-1"]
