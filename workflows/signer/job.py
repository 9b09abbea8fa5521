"""`SigningJob`: one job's life, as few history events as the seed's semantics allow."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from activities.signer.contracts.jobs import JobResult, JobStatus, ProcessJobInput, RunJobInput
    from activities.signer.contracts.names import (
        APPROVAL_DECIDED_SIGNAL,
        JOB_WORKFLOW,
        PROCESS_JOB_ACTIVITY,
    )
    from shared.contracts.search_attributes import JOB_STATUS, PROFILE

from workflows.signer.approval import ApprovalWait, clean_up_canceled
from workflows.signer.remote import await_signer
from workflows.visibility import publish

# A 200 MB document signs in well under this; the heartbeat, not this, detects a lost worker.
PROCESS_TIMEOUT = timedelta(hours=2)
# Infrastructure failures (store down, worker lost) retry without limit: the activity itself
# refuses to sign twice, so a retry can only requeue or fail the job, never repeat a signature.
PROCESS_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), backoff_coefficient=2.0,
                            maximum_interval=timedelta(seconds=30), maximum_attempts=0)
# Runs started before it ended without the cleanup when the cancel reached them while the first
# signing activity was still answering (after it had held the job for approval).
CANCELED_DURING_PROCESS_PATCH = "signer-job-canceled-during-process-cleanup"


@workflow.defn(name=JOB_WORKFLOW)
class SigningJobWorkflow:
    """Runs the signing activity on the gated signing queue and returns how the job ended."""

    def __init__(self) -> None:
        self._approval = ApprovalWait()

    @workflow.signal(name=APPROVAL_DECIDED_SIGNAL)
    def approval_decided(self) -> None:
        """A decision was recorded in the store; look at the tally again."""
        self._approval.decided()

    @workflow.run
    async def run(self, request: RunJobInput) -> JobResult:
        try:
            result = self._seen(await self._first_process(request))
            if result.status == JobStatus.AWAITING_APPROVAL:
                result = self._seen(await self._approval.run(
                    request.job_id, result, lambda: self._process(request)))
            if result.status == JobStatus.AWAITING_SIGNER:
                return self._seen(await await_signer(request.job_id))
            return result
        except (asyncio.CancelledError, ActivityError) as exc:
            if is_cancelled_exception(exc):
                # Only an operator's cancel cancels this workflow; the row is already Canceled.
                publish(PROFILE, JOB_STATUS.value_set(JobStatus.CANCELED))
            raise

    @staticmethod
    def _seen(result: JobResult) -> JobResult:
        """`JobStatus` in the Temporal UI follows each status the workflow learns."""
        publish(PROFILE, JOB_STATUS.value_set(result.status))
        return result

    async def _first_process(self, request: RunJobInput) -> JobResult:
        """The signing activity, the first time; after a cancel, the staged copy to error/."""
        try:
            return await self._process(request)
        except (asyncio.CancelledError, ActivityError) as exc:
            # The cancel doesn't wait for the activity: one that had just held the job for
            # approval (its copy staged) answers too late, and nothing else would move the copy.
            if is_cancelled_exception(exc) and workflow.patched(CANCELED_DURING_PROCESS_PATCH):
                await clean_up_canceled(request.job_id)
            raise

    async def _process(self, request: RunJobInput) -> JobResult:
        """The signing activity (a released job runs it again, through the common queue)."""
        return await workflow.execute_activity(
            PROCESS_JOB_ACTIVITY, ProcessJobInput(job_id=request.job_id),
            task_queue=request.signing_task_queue, start_to_close_timeout=PROCESS_TIMEOUT,
            # A worker killed mid-job is noticed this fast; the retry requeues or fails it.
            heartbeat_timeout=timedelta(seconds=request.heartbeat_timeout_seconds),
            retry_policy=PROCESS_RETRY,
            result_type=JobResult,
        )
