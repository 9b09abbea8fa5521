"""`signer-archive-renewal`: a scheduled pass that renews the B-LTA files about to expire."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from activities.signer.contracts.archive import (
        ARCHIVE_RENEWAL_WORKFLOW,
        DUE_ARCHIVES_ACTIVITY,
        RENEW_ARCHIVE_ACTIVITY,
        DueArchivesResult,
        RenewArchiveInput,
        RenewArchiveResult,
        RenewArchivesInput,
        RenewArchivesResult,
    )

SCAN_TIMEOUT = timedelta(minutes=1)
# A renewal is one TSA round trip, the TSA chain's OCSP/CRL and a file write.
RENEW_TIMEOUT = timedelta(minutes=5)
# Retrying is safe: the renewal is keyed on the file's timestamp count, so a replay adds
# nothing; a TSA still down after these tries waits for the next pass.
RENEW_RETRY = RetryPolicy(initial_interval=timedelta(seconds=5), maximum_attempts=3)


@workflow.defn(name=ARCHIVE_RENEWAL_WORKFLOW)
class ArchiveRenewalWorkflow:
    """Lists the files due and renews each in turn (one TSA at a time is plenty)."""

    @workflow.run
    async def run(self, request: RenewArchivesInput) -> RenewArchivesResult:
        due: DueArchivesResult = await workflow.execute_activity(
            DUE_ARCHIVES_ACTIVITY, request, start_to_close_timeout=SCAN_TIMEOUT,
            result_type=DueArchivesResult)
        renewed = replayed = failed = 0
        for item in due.due:
            result: RenewArchiveResult = await workflow.execute_activity(
                RENEW_ARCHIVE_ACTIVITY, RenewArchiveInput(name=item.name,
                                                          timestamps=item.timestamps),
                start_to_close_timeout=RENEW_TIMEOUT, retry_policy=RENEW_RETRY,
                result_type=RenewArchiveResult)
            renewed += result.renewed
            replayed += result.replayed
            failed += result.error_code is not None
        return RenewArchivesResult(renewed=renewed, replayed=replayed, failed=failed)
