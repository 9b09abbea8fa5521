"""The AwaitingSigner wait of `SigningJob`: durable poll timers, woken early by webhooks."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from activities.signer.contracts.jobs import JobResult, JobStatus
    from activities.signer.contracts.lacuna import (
        CancelRemoteInput,
        CheckRemoteInput,
        FinishRemoteInput,
        LacunaErrorCode,
        RemoteState,
        RemoteStatus,
        SignerWebhook,
    )
    from activities.signer.contracts.names import (
        LACUNA_CANCEL_REMOTE_ACTIVITY,
        LACUNA_CHECK_ACTIVITY,
        LACUNA_FINISH_ACTIVITY,
        WEBHOOK_SIGNAL,
    )

# One status read is a single HTTP call, cut by Signer:RequestTimeoutSeconds well before this.
CHECK_TIMEOUT = timedelta(minutes=1)
# The store being down must not fail a job the remote side holds: retry without limit.
CHECK_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), backoff_coefficient=2.0,
                          maximum_interval=timedelta(minutes=1), maximum_attempts=0)
# Download + verify + promote of a large document; the heartbeat notices a lost worker.
FINISH_TIMEOUT = timedelta(hours=2)
FINISH_HEARTBEAT = timedelta(seconds=30)
# Best effort: a few tries, then the failure is only logged (the local cancel stands).
CANCEL_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=3)


class _Wake:
    """Set by a webhook signal; the poll timer is cut short when it is."""

    def __init__(self) -> None:
        self.pending = False

    def signal(self, _webhook: SignerWebhook) -> None:
        self.pending = True


async def await_signer(job_id: str, document_id: str | None = None) -> JobResult:
    """Poll the Signer every `Signer:PollIntervalSeconds` until the document ends; then finish.

    Runs on the jobs queue, never the pausable signing queue: the slot was freed at dispatch,
    and a paused pipeline must not strand documents the remote side already holds.
    """
    wake = _Wake()
    workflow.set_signal_handler(WEBHOOK_SIGNAL, wake.signal)
    started = workflow.now()
    try:
        while True:
            # Cleared before the read: a webhook arriving during it still cuts the next wait.
            wake.pending = False
            waited = (workflow.now() - started).total_seconds()
            status = await workflow.execute_activity(
                LACUNA_CHECK_ACTIVITY, CheckRemoteInput(job_id=job_id, waited_seconds=waited),
                start_to_close_timeout=CHECK_TIMEOUT, retry_policy=CHECK_RETRY,
                result_type=RemoteStatus)
            document_id = status.document_id or document_id
            if status.state is RemoteState.GONE:
                if status.remote_status == JobStatus.CANCELED and document_id:
                    # Canceled while this workflow's cancel request was lost.
                    await _cancel_remote(job_id, document_id)
                return JobResult(job_id=job_id, status=JobStatus.CANCELED,
                                 message="job left AwaitingSigner")
            if status.state is RemoteState.CONCLUDED:
                return await _finish(FinishRemoteInput(job_id=job_id))
            if status.state is RemoteState.FAILED:
                return await _finish(_failure(job_id, status))
            if waited >= status.max_wait_seconds:
                return await _finish(FinishRemoteInput(
                    job_id=job_id, failure_code=LacunaErrorCode.TIMEOUT,
                    failure_message=f"The Lacuna Signer document {document_id} was not "
                                    f"concluded within {status.max_wait_seconds:.0f} s."))
            with contextlib.suppress(TimeoutError):
                await workflow.wait_condition(lambda: wake.pending,
                                              timeout=timedelta(seconds=status.poll_seconds))
    except (asyncio.CancelledError, ActivityError) as exc:
        # A cancel lands in the timer or, as an ActivityError, in a running status check.
        if not is_cancelled_exception(exc):
            raise
        # An operator's cancel: the local Canceled is already committed by the API.
        await _cancel_remote(job_id, document_id)
        raise


async def _cancel_remote(job_id: str, document_id: str | None) -> None:
    await workflow.execute_activity(
        LACUNA_CANCEL_REMOTE_ACTIVITY,
        CancelRemoteInput(job_id=job_id, document_id=document_id),
        start_to_close_timeout=CHECK_TIMEOUT, retry_policy=CANCEL_RETRY)


def _failure(job_id: str, status: RemoteStatus) -> FinishRemoteInput:
    codes = {"Refused": LacunaErrorCode.REFUSED, "Expired": LacunaErrorCode.EXPIRED,
             "Canceled": LacunaErrorCode.CANCELED_REMOTELY}
    code = codes.get(status.remote_status or "", LacunaErrorCode.REFUSED)
    return FinishRemoteInput(job_id=job_id, failure_code=code,
                             failure_message=f"The Lacuna Signer document {status.document_id} "
                                             f"ended {status.remote_status}.")


async def _finish(request: FinishRemoteInput) -> JobResult:
    return await workflow.execute_activity(
        LACUNA_FINISH_ACTIVITY, request, start_to_close_timeout=FINISH_TIMEOUT,
        heartbeat_timeout=FINISH_HEARTBEAT, retry_policy=CHECK_RETRY, result_type=JobResult)
