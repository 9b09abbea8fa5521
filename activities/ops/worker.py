"""What the `ops` domain runs on a worker: the probe workflow and its echo activity."""

from __future__ import annotations

from activities.ops.probe import echo
from shared.contracts.ops import TASK_QUEUE
from shared.worker_shape import DomainWorker, WorkerDeps
from workflows.ops.probe import ProbeWorkflow


async def build(_deps: WorkerDeps) -> list[DomainWorker]:
    """The probe on `ops-v1`."""
    return [DomainWorker(TASK_QUEUE, workflows=[ProbeWorkflow], activities=[echo])]
