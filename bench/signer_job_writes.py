"""A job's store writes on SQLite: the writer thread against the per-statement road, same run.

Each job makes the writes a signed document makes (the claim, the signing checkpoint with its
staged row, Processing -> Verifying, Verifying -> Completed), four jobs at a time as
`Pipeline:MaxConcurrency` 4 runs them. Printed per job: this process's CPU (every thread) and
wall time, through the SQLite writer (`shared/db/sqlite_writer.py`, one hand-off per
transaction) and, as the baseline, through the async engine (one hand-off per statement, the
road PostgreSQL still takes). Rounds alternate the two so drift hits both alike.

Usage: .venv/bin/python bench/signer_job_writes.py [--jobs 1000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from activities.signer import job_writes  # noqa: E402
from activities.signer.contracts.jobs import JobStatus  # noqa: E402
from activities.signer.models.jobs import Job  # noqa: E402
from activities.signer.repository import JobRepository, new_job_id  # noqa: E402
from shared.db import migrate  # noqa: E402
from shared.db.engine import create_engine, session_factory  # noqa: E402
from shared.db.sqlite_writer import writer_for  # noqa: E402

CONCURRENCY = 4


async def one_job(repository: JobRepository, job_id: str) -> None:
    """The four write transactions of a job that is signed and verified."""
    await repository.claim(job_id, "Worker started job (bench).", instance_id="bench")
    await repository.note(job_id, "Signing (Pades).", preceded_by="Staged 114000 bytes.",
                          input_size=114000, input_sha256="0" * 64)
    await repository.transition(job_id, [JobStatus.PROCESSING], JobStatus.VERIFYING,
                                "Signed; verifying.")
    await repository.transition(job_id, [JobStatus.VERIFYING], JobStatus.COMPLETED,
                                "Completed.", output_path="/out/x.signed.pdf")


async def measure(repository: JobRepository, jobs: int) -> tuple[float, float]:
    """CPU and wall ms per job for `jobs` new jobs, CONCURRENCY at a time."""
    rows = [Job(id=new_job_id(), file_name=f"{i}.pdf", original_path=f"/in/{new_job_id()}.pdf",
                source="watcher", profile_name="default", format="Pades",
                status=JobStatus.QUEUED.value) for i in range(jobs)]
    for start in range(0, jobs, 200):
        await repository.insert_all([(job, "Queued.") for job in rows[start:start + 200]])
    gate = asyncio.Semaphore(CONCURRENCY)

    async def gated(job_id: str) -> None:
        async with gate:
            await one_job(repository, job_id)

    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(gated(job.id) for job in rows))
    return ((time.process_time() - cpu) * 1000 / jobs,
            (time.perf_counter() - wall) * 1000 / jobs)


async def main(url: str, jobs: int, rounds: int) -> None:
    engine = create_engine(url)
    repository = JobRepository(session_factory(engine))
    assert writer_for(engine) is not None
    roads = {"writer thread": writer_for, "per statement (baseline)": lambda _engine: None}
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in roads}
    await measure(repository, 100)  # warm: connections, compiled statements, the thread
    for number in range(rounds):
        for name, road in roads.items():
            job_writes.writer_for = road
            figures[name].append(await measure(repository, jobs))
            cpu, wall = figures[name][-1]
            print(f"round {number + 1}  {name:26s} CPU {cpu:5.2f} ms/job  wall {wall:5.2f} ms/job",
                  flush=True)
    job_writes.writer_for = writer_for
    await engine.dispose()
    print(f"\n{jobs} jobs x 4 write transactions, {CONCURRENCY} at a time; medians of {rounds}:")
    for name, values in figures.items():
        print(f"  {name:26s} CPU {statistics.median(v[0] for v in values):5.2f} ms/job  "
              f"wall {statistics.median(v[1] for v in values):5.2f} ms/job")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()
    store = f"sqlite+aiosqlite:///{Path(tempfile.mkdtemp(prefix='bench-writes-')) / 'esteira.db'}"
    migrate.upgrade(store)  # runs its own event loop
    asyncio.run(main(store, arguments.jobs, arguments.rounds))
