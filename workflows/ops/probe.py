"""`ProbeWorkflow`: one no-op activity; the cheapest round trip through server and worker."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.ops.probe import echo
    from shared.contracts.ops import ProbeResult, RunProbeInput

# A no-op should finish at once; a short timeout surfaces a stuck worker quickly.
ECHO_TIMEOUT = timedelta(seconds=30)


@workflow.defn(name="ops-probe")
class ProbeWorkflow:
    """Runs `echo` once and returns its result."""

    @workflow.run
    async def run(self, request: RunProbeInput) -> ProbeResult:
        return await workflow.execute_activity(
            echo, request, start_to_close_timeout=ECHO_TIMEOUT
        )
