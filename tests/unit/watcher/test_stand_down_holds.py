"""A stood-down watcher asks the Lacuna Signer nothing and starts no workflow."""

from __future__ import annotations

import asyncio
import time

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


class _Repository:
    def __init__(self) -> None:
        self.asked = 0

    async def unstarted_queued(self, _before) -> list[str]:
        self.asked += 1
        return ["job-1"]


class _Enqueuer:
    def __init__(self) -> None:
        self.started: list[str] = []

    async def start_workflow(self, job_id: str) -> None:
        self.started.append(job_id)


async def _one_round(held: bool) -> tuple[_Repository, _Enqueuer]:
    repository, enqueuer, stop = _Repository(), _Enqueuer(), asyncio.Event()
    task = asyncio.create_task(_start_orphaned_queued(repository, enqueuer, stop,
                                                      lambda: held))
    await asyncio.sleep(0.1)  # the first round runs at once; the next is 30 s away
    stop.set()
    await task
    return repository, enqueuer


async def test_lost_queued_starts_are_left_to_a_live_instance_while_stood_down():
    repository, enqueuer = await _one_round(held=True)
    assert (repository.asked, enqueuer.started) == (0, [])
    repository, enqueuer = await _one_round(held=False)
    assert (repository.asked, enqueuer.started) == (1, ["job-1"])
