"""The AwaitingApproval wait of a `SigningJob`: quorum, veto, expiry, operator cancel."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from activities.signer.contracts.approvals import (
        ApprovalJobInput,
        ApprovalStepResult,
        ApprovalTally,
    )
    from activities.signer.contracts.jobs import JobResult, JobStatus
    from activities.signer.contracts.names import (
        APPROVAL_CLEANUP_ACTIVITY,
        APPROVAL_EXPIRE_ACTIVITY,
        APPROVAL_NOTIFY_ACTIVITY,
        APPROVAL_REJECT_ACTIVITY,
        APPROVAL_RELEASE_ACTIVITY,
        APPROVAL_TALLY_ACTIVITY,
    )

# Approval steps are a few SQL writes and a file move; a minute is generous.
STEP_TIMEOUT = timedelta(minutes=1)
# Store or disk trouble retries without limit: every step is a conditional write.
STEP_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), backoff_coefficient=2.0,
                         maximum_interval=timedelta(seconds=30), maximum_attempts=0)
# An SMTP server can be down for a while; the outbox keeps the mail, this keeps trying.
NOTIFY_TIMEOUT = timedelta(minutes=2)
NOTIFY_RETRY = RetryPolicy(initial_interval=timedelta(seconds=5), backoff_coefficient=2.0,
                           maximum_interval=timedelta(minutes=10), maximum_attempts=0)
# After a conditional step lost its race, look again a moment later instead of spinning.
LOST_RACE_PAUSE = timedelta(seconds=1)
# The API signals after recording a decision; should that signal be lost (Temporal briefly
# unreachable), the store is read again this often anyway.
RETALLY_EVERY = timedelta(minutes=5)
# Runs started before it ended without the cleanup when a tally, or a released job's claim,
# found the job Canceled in the store.
CANCELED_IN_STORE_PATCH = "signer-approval-canceled-in-store-cleanup"


class ApprovalWait:
    """The job workflow's approval state: holds a job until its approvers (or the clock) decide.

    The workflow owns the signal and calls `decided()`; this object only keeps the flag.
    """

    def __init__(self) -> None:
        self.news = False

    def decided(self) -> None:
        """A decision was recorded in the store; look at the tally again."""
        self.news = True

    async def run(self, job_id: str, held: JobResult,
                  process: Callable[[], Awaitable[JobResult]]) -> JobResult:
        """Wait while the job is held; on quorum run `process` again (the common queue)."""
        result = held
        notify = None
        try:
            while result.status == JobStatus.AWAITING_APPROVAL:
                notify = notify or workflow.start_activity(
                    APPROVAL_NOTIFY_ACTIVITY, ApprovalJobInput(job_id=job_id),
                    start_to_close_timeout=NOTIFY_TIMEOUT, retry_policy=NOTIFY_RETRY)
                ended = await self._await_decision(job_id)
                if ended is not None:
                    return ended
                result = await self._canceled_in_store(job_id, await process())
            return result
        except (asyncio.CancelledError, ActivityError) as exc:
            if not is_cancelled_exception(exc):
                raise
            # An operator cancel: the staged copy goes to error/<job>/ (best effort).
            await clean_up_canceled(job_id)
            raise
        finally:
            if notify is not None and not notify.done():
                notify.cancel()

    async def _await_decision(self, job_id: str) -> JobResult | None:
        """None when released to the queue; the final result when the wait ended the job."""
        while True:
            self.news = False
            tally = await _step(APPROVAL_TALLY_ACTIVITY, job_id, ApprovalTally)
            if tally.job_status != JobStatus.AWAITING_APPROVAL:
                status = JobStatus(tally.job_status) if tally.job_status else JobStatus.CANCELED
                return await self._canceled_in_store(
                    job_id, JobResult(job_id=job_id, status=status, message="approval wait ended"))
            if tally.rejected:
                return await _step(APPROVAL_REJECT_ACTIVITY, job_id, JobResult)
            if tally.approvals >= tally.quorum:
                if (await _step(APPROVAL_RELEASE_ACTIVITY, job_id,
                                ApprovalStepResult)).applied:
                    return None
                await workflow.sleep(LOST_RACE_PAUSE)
                continue
            timeout = RETALLY_EVERY.total_seconds()
            if tally.expires_at is not None:
                # Wall clock from when the hold began (a pipeline pause doesn't stop it).
                remaining = (tally.expires_at - workflow.now()).total_seconds()
                if remaining <= 0:
                    expired = await _step(APPROVAL_EXPIRE_ACTIVITY, job_id,
                                          ApprovalStepResult)
                    if expired.applied:
                        return JobResult(job_id=job_id, status=JobStatus.CANCELED,
                                         message=expired.message)
                    await workflow.sleep(LOST_RACE_PAUSE)
                    continue
                timeout = min(timeout, remaining)
            # On timeout the next tally finds the window closed (or a decision whose signal
            # was lost).
            with contextlib.suppress(TimeoutError):
                await workflow.wait_condition(lambda: self.news, timeout=timeout)

    async def _canceled_in_store(self, job_id: str, result: JobResult) -> JobResult:
        """`result`, after the cleanup when it says the store holds the job Canceled.

        The operator's cancel is committed before the workflow is asked to stop: a tally or a
        released job's claim in between (or a lost cancel request) learns of it from the store,
        and the staged copy must still reach error/.
        """
        if result.status == JobStatus.CANCELED and workflow.patched(CANCELED_IN_STORE_PATCH):
            await clean_up_canceled(job_id)
        return result


async def clean_up_canceled(job_id: str) -> None:
    """A Canceled job's staged copy to error/<job>/ and its approval closed (else nothing)."""
    await _step(APPROVAL_CLEANUP_ACTIVITY, job_id, ApprovalStepResult)


async def _step(name: str, job_id: str, result_type: type) -> Any:
    """One approval step activity on the workflow's queue, retried until the store answers."""
    return await workflow.execute_activity(
        name, ApprovalJobInput(job_id=job_id), start_to_close_timeout=STEP_TIMEOUT,
        retry_policy=STEP_RETRY, result_type=result_type)
