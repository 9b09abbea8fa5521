"""The consecutive-failure counter: enqueues failing in parallel are all counted and stored."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

from activities.signer.contracts.jobs import FolderStatus
from activities.signer.models.jobs import SigningProfile
from services.watcher.folder import FolderWatcher
from shared.settings import InputFolderSettings


class _BrokenEnqueuer:
    async def enqueue(self, *args, **kwargs):
        raise OSError("disk full")


class _LastWriteWinsStore:
    """A store whose earlier saves finish later, the way parallel commits can land."""

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.stored: tuple[FolderStatus, int] | None = None
        self.saves: list[int] = []

    async def record_state(self, name: str, status: FolderStatus, error: str | None,
                           failures: int) -> None:
        # Not a synchronisation: it only makes an unordered save land out of order.
        await asyncio.sleep(0.02 * (self.expected - failures))
        self.saves.append(failures)
        self.stored = (status, failures)


def _watcher(tmp_path: Path, store: _LastWriteWinsStore, max_failures: int) -> FolderWatcher:
    # The face as the watcher sees it: files taken by a broken enqueuer, states to `store`.
    signer = SimpleNamespace(watching=SimpleNamespace(take=_BrokenEnqueuer().enqueue),
                             folders=store)
    watcher = FolderWatcher(InputFolderSettings(name="inbox"), tmp_path,
                            signer=signer,  # type: ignore[arg-type]
                            stability_seconds=0.1, poll_seconds=0.1, max_failures=max_failures)
    watcher._profile = SigningProfile(name="inbox")  # assigned: the enqueue path runs
    return watcher


async def _fail_in_parallel(watcher: FolderWatcher, tmp_path: Path, count: int) -> None:
    paths = []
    for n in range(count):
        path = tmp_path / f"f{n}.pdf"
        path.write_bytes(b"%PDF")
        paths.append(path)
    await asyncio.gather(*(watcher._enqueue(path) for path in paths))


async def test_parallel_failures_are_all_stored(tmp_path):
    store = _LastWriteWinsStore(expected=5)
    watcher = _watcher(tmp_path, store, max_failures=10)
    await _fail_in_parallel(watcher, tmp_path, 5)
    assert watcher.failures == 5
    assert store.stored == (FolderStatus.STARTING, 5)
    assert store.saves == [1, 2, 3, 4, 5], "each count is saved in the order it was reached"


async def test_the_failure_that_reaches_the_limit_stores_stopped_with_the_full_count(tmp_path):
    store = _LastWriteWinsStore(expected=3)
    watcher = _watcher(tmp_path, store, max_failures=3)
    await _fail_in_parallel(watcher, tmp_path, 3)
    assert watcher.status is FolderStatus.STOPPED
    assert store.stored == (FolderStatus.STOPPED, 3)
