"""The folder watcher against a real pipeline: capture, stability, binding, failure limit."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from types import SimpleNamespace

from sqlalchemy import event
from sqlmodel import select

from activities.signer.contracts.jobs import FolderStatus
from activities.signer.crypto.samples import make_pdf, make_remittance
from activities.signer.enqueue import EnqueueResult, Outcome
from activities.signer.models.jobs import InputFolderState, Job, SigningProfile
from activities.signer.operator import SignerOperations
from activities.signer.repository import JobRepository
from services.watcher.folder import ENQUEUE_BATCH, FolderWatcher
from services.watcher.main import _hand_back_diverged
from shared.db.engine import create_engine, session_factory
from shared.db.models import OperationalEvent
from shared.settings import InputFolderSettings
from shared.temporal import TemporalHandle


def _watcher(signer, *, enqueuer=None, folder: InputFolderSettings | None = None,
             path: Path | None = None, max_failures: int = 10) -> FolderWatcher:
    return FolderWatcher(folder or InputFolderSettings(name="inbox"), path or signer.inbox,
                         signer=_with_enqueuer(signer.face, enqueuer), stability_seconds=0.3,
                         poll_seconds=0.2, max_failures=max_failures)


def _with_enqueuer(face: SignerOperations, enqueuer) -> SignerOperations:
    """The face, its watcher's files taken by `enqueuer` instead (a broken or busy one)."""
    if enqueuer is None:
        return face
    return SimpleNamespace(folders=face.folders,  # type: ignore[return-value]
                           watching=SimpleNamespace(take=enqueuer.enqueue))


@contextlib.asynccontextmanager
async def running(watcher: FolderWatcher):
    stop = asyncio.Event()
    task = asyncio.create_task(watcher.run(stop))
    try:
        yield watcher
    finally:
        stop.set()
        await task


async def _jobs(signer) -> list[Job]:
    async with signer.sessions() as session:
        return list((await session.exec(select(Job).order_by(Job.created_at))).all())


async def _eventually(predicate, timeout: float = 20.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        result = await predicate()
        if result:
            return result
        await asyncio.sleep(0.05)
    raise AssertionError("condition not met in time")


async def test_files_present_at_startup_and_dropped_later_become_jobs(signer):
    signer.drop("before.pdf", make_pdf())
    async with running(_watcher(signer)):
        await _eventually(lambda: _count(signer, 1))
        signer.drop("after.rem", make_remittance())
        jobs = await _eventually(lambda: _count(signer, 2))
    assert sorted(j.file_name for j in jobs) == ["after.rem", "before.pdf"]
    assert all(j.folder == "inbox" and j.source == "watcher" for j in jobs)


async def test_a_file_still_being_written_waits_for_stability(signer):
    async with running(_watcher(signer)):
        path = signer.inbox / "big.rem"
        with path.open("wb") as handle:
            for _ in range(8):
                handle.write(b"1" * 240 + b"\n")
                handle.flush()
                await asyncio.sleep(0.1)
                assert await _jobs(signer) == [], "no job while the producer writes"
        jobs = await _eventually(lambda: _count(signer, 1))
    done = await signer.wait_for(jobs[0].id)
    assert done.input_size == 8 * 241


async def test_polling_mode_captures_files_too(signer):
    folder = InputFolderSettings(name="inbox", polling_interval_seconds=0.2)
    async with running(_watcher(signer, folder=folder)):
        await asyncio.sleep(0.3)
        signer.drop("polled.pdf", make_pdf())
        await _eventually(lambda: _count(signer, 1))


async def test_an_unassigned_folder_is_watched_by_nobody_until_a_profile_picks_it(signer):
    async with signer.sessions() as session:
        profile = await session.get(SigningProfile, "default")
        profile.input_folder = None
        session.add(profile)
        await session.commit()
    signer.drop("waiting.pdf", make_pdf())
    async with running(_watcher(signer)) as watcher:
        await asyncio.sleep(1.0)
        assert await _jobs(signer) == []
        assert watcher.status is FolderStatus.UNASSIGNED
        async with signer.sessions() as session:
            profile = await session.get(SigningProfile, "default")
            profile.input_folder = "inbox"
            session.add(profile)
            await session.commit()
        await _eventually(lambda: _count(signer, 1))
        assert watcher.status is FolderStatus.RUNNING


async def test_a_burst_of_drops_shares_its_lookups_inserts_and_connections(signer):
    """A batch of enqueues at once asks its questions in one statement and writes its rows in
    one commit (the first file's go alone): before, each file had its own, and each of the 16
    held a connection of its own, which the pool closed after the burst."""
    engine = create_engine(signer.settings.sqlalchemy_url)
    in_use, peak, closed = [0], [0], []

    def checked_out(*_) -> None:
        in_use[0] += 1
        peak[0] = max(peak[0], in_use[0])

    def checked_in(*_) -> None:
        in_use[0] -= 1

    event.listen(engine.sync_engine, "checkout", checked_out)
    event.listen(engine.sync_engine, "checkin", checked_in)
    event.listen(engine.sync_engine.pool, "close", lambda *_: closed.append(1))
    # The watcher process's face, on its own engine (one Enqueuer: its batches span the burst).
    face = SignerOperations(signer.settings, session_factory(engine),
                            TemporalHandle.of(signer.client))
    repository = face.repository
    lookups, inserts = _counted(repository, "paths_and_names"), _counted(repository, "insert_all")
    watcher = FolderWatcher(InputFolderSettings(name="inbox"), signer.inbox, signer=face,
                            stability_seconds=0.3, poll_seconds=0.2, max_failures=10)
    try:
        async with running(watcher):
            for burst in range(3):
                for n in range(ENQUEUE_BATCH):
                    signer.drop(f"burst{burst}-{n}.pdf", make_pdf(1000))
                await _eventually(lambda total=(burst + 1) * ENQUEUE_BATCH:
                                  _count(signer, total))
        closed_mid_run = len(closed)
    finally:
        await engine.dispose()
    files = 3 * ENQUEUE_BATCH
    assert sum(lookups) == sum(inserts) == files
    # A burst split over two ticks of the stability check takes four of each; one per file before.
    assert len(lookups) <= files // 3 and len(inserts) <= files // 3, (lookups, inserts)
    assert peak[0] <= 5 and closed_mid_run == 0, (peak, closed_mid_run)


def _counted(repository: JobRepository, name: str) -> list[int]:
    """Wrap one of the repository's batch methods; the list gets each call's batch size."""
    sizes: list[int] = []
    method = getattr(repository, name)

    async def counting(items):
        sizes.append(len(items))
        return await method(items)

    setattr(repository, name, counting)
    return sizes


class _BrokenEnqueuer:
    async def enqueue(self, *args, **kwargs) -> EnqueueResult:
        raise OSError("disk full")


class _ActiveEnqueuer:
    async def enqueue(self, *args, **kwargs) -> EnqueueResult:
        return EnqueueResult(Outcome.ALREADY_ACTIVE)


async def test_consecutive_failures_stop_only_that_folders_watcher(signer, tmp_path):
    for n in range(3):
        signer.drop(f"f{n}.pdf", make_pdf(1000))
    broken = _watcher(signer, enqueuer=_BrokenEnqueuer(), max_failures=3)
    async with running(broken):
        await _eventually(lambda: _stopped(broken))
    async with signer.sessions() as session:
        state = await session.get(InputFolderState, "inbox")
    assert state.status == "Stopped" and "disk full" in state.last_error
    assert state.consecutive_failures == 3
    from activities.signer.metrics import FOLDER_STATUS

    assert FOLDER_STATUS.labels(folder="inbox", status="Stopped")._value.get() == 1
    assert FOLDER_STATUS.labels(folder="inbox", status="Running")._value.get() == 0
    assert all((signer.inbox / f"f{n}.pdf").exists() for n in range(3)), "nothing is lost"


async def test_a_dropped_file_whose_name_cannot_be_carried_is_moved_aside_not_lost(signer):
    name = "fatura\u202efdp.exe.pdf"
    signer.drop(name, make_pdf(1000))
    async with running(_watcher(signer, max_failures=1)) as watcher:
        [job] = await _eventually(lambda: _count(signer, 1))
        assert watcher.status is FolderStatus.RUNNING and watcher.failures == 0
    assert (job.status, job.error_code, job.source) == ("Failed", "input.invalid-name",
                                                        "watcher")
    assert not (signer.inbox / name).exists()
    assert (signer.settings.storage_root / "error" / job.id / name).exists()
    [event] = await signer.events("InvalidFileName")
    assert event.properties["jobId"] == job.id


async def test_already_active_resets_the_failure_counter(signer):
    watcher = _watcher(signer, enqueuer=_ActiveEnqueuer(), max_failures=2)
    watcher.failures = 1
    signer.drop("x.pdf", make_pdf(1000))
    async with running(watcher):
        await _eventually(lambda: _reset(watcher))
    assert watcher.status is FolderStatus.RUNNING


async def test_a_diverged_input_is_handed_back_to_its_folder(signer):
    offered = []

    class _Watcher:
        status = FolderStatus.RUNNING

        def offer(self, path):
            offered.append(path)

    stop = asyncio.Event()
    task = asyncio.create_task(_hand_back_diverged(signer.face, {"inbox": _Watcher()}, stop,
                                                   0.1))
    await asyncio.sleep(0.3)
    async with signer.sessions() as session:
        session.add(OperationalEvent(domain="signer", type="InputDiverged", message="m",
                                     properties={"path": "/in/a.rem", "folder": "inbox"}))
        session.add(OperationalEvent(domain="signer", type="InputDiverged", message="m",
                                     properties={"path": "/up/b.rem", "folder": None}))
        await session.commit()
    await _eventually(lambda: _nonempty(offered), timeout=10)
    stop.set()
    await task
    assert offered == [Path("/in/a.rem")], "uploads have no watcher to hand back to"


async def _held_name_job(signer) -> str:
    """A Completed job holding `nome.pdf`, captured by the running watcher."""
    signer.drop("nome.pdf", make_pdf())
    [owner] = await _eventually(lambda: _count(signer, 1))
    assert (await signer.wait_for(owner.id)).status == "Completed"
    return owner.id


async def test_a_held_name_dropped_again_is_born_failed_each_time_never_signed(signer):
    async with running(_watcher(signer)):
        owner = await _held_name_job(signer)
        for n in (2, 3):
            signer.drop("nome.pdf", make_pdf(pages=n))
            jobs = await _eventually(lambda n=n: _count(signer, n))
            assert (jobs[-1].status, jobs[-1].error_code) == ("Failed", "file.already-processed")
            assert owner in jobs[-1].error_message
            assert (signer.settings.storage_root / "error" / jobs[-1].id / "nome.pdf").exists()
    assert not (signer.inbox / "nome.pdf").exists(), "each drop is moved aside, not left"
    assert len(await signer.events("FileAlreadyProcessed")) == 2


async def test_once_the_job_holding_a_name_is_deleted_the_watcher_takes_the_name_again(signer):
    async with running(_watcher(signer)):
        owner = await _held_name_job(signer)
        signer.drop("nome.pdf", make_pdf(pages=2))
        [_, refused] = await _eventually(lambda: _count(signer, 2))
        assert refused.error_code == "file.already-processed"
        await signer.face.jobs.delete(owner, actor="test")
        signer.drop("nome.pdf", make_pdf(pages=3))
        # The owner's row is gone: the refused job and the new one are the two left.
        [_, again] = await _eventually(lambda: _count_new(signer, refused.id))
    assert again.source == "watcher" and again.error_code is None
    assert (await signer.wait_for(again.id)).status == "Completed"


async def _count_new(signer, after: str):
    jobs = await _jobs(signer)
    return jobs if len(jobs) == 2 and jobs[0].id == after else None


async def _count(signer, n: int):
    jobs = await _jobs(signer)
    return jobs if len(jobs) >= n else None


async def _stopped(watcher):
    return watcher.status is FolderStatus.STOPPED


async def _reset(watcher):
    return watcher.failures == 0


async def _nonempty(items):
    return bool(items)
