"""The Temporal floor under an order: a workflow with the same activities, local activities and
signal as a real order's history, each a no-op, on the same server.

`python bench/sisbajud_baseline.py --serve ADDRESS TASK_QUEUE` runs its worker (a child of
`bench/sisbajud_webhook.py`, like `esteira worker`); `run_baseline` drives it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from temporalio import activity, workflow
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.common import SearchAttributePair, TypedSearchAttributes
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

if not workflow.unsafe.in_sandbox():  # the sandbox re-runs this module; the path is set
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

with workflow.unsafe.imports_passed_through():
    from shared.contracts.search_attributes import EXECUTION_STATE, ORDER_ID

WORKFLOW = "bench-noop-order"
STEP_TIMEOUT = timedelta(seconds=30)


@dataclass
class Shape:
    """What one order's history did: steps in order (`a` activity, `l` local), signals, and
    what it adds for operators: patch markers, search-attribute upserts, memo updates."""

    steps: str
    signals: int
    other: dict[str, int]
    patches: int = 0
    upserts: int = 0  # besides the one each first `patched()` makes (TemporalChangeVersion)
    memos: int = 0


@dataclass
class Visibility:
    """What the visible baseline adds to the no-op steps (all zero: the plain baseline)."""

    patches: int = 0
    upserts: int = 0
    memos: int = 0


@activity.defn(name="bench-noop")
async def noop() -> None:
    """Nothing."""


@workflow.defn(name=WORKFLOW)
class NoopOrder:
    """Started by a signal like an order; then the order's steps, each doing nothing."""

    def __init__(self) -> None:
        self._signals = 0

    @workflow.signal(name="notice")
    def notice(self, _: int) -> None:
        self._signals += 1

    @workflow.run
    async def run(self, steps: str, signals: int, visibility: Visibility | None = None) -> int:
        await workflow.wait_condition(lambda: self._signals >= signals)
        extra = visibility or Visibility()
        for number in range(extra.patches):
            workflow.patched(f"bench-noop-{number}")
        for _ in range(extra.memos):
            workflow.upsert_memo({"summary": "bench"})
        # Spread like the order's: one with the first step, the rest at the end.
        upserts = [min(1, extra.upserts), max(0, extra.upserts - 1)]
        for number, step in enumerate(steps):
            if number == 0:
                _upsert(upserts[0], "EXECUTING")
            if step == "a":
                await workflow.execute_activity(noop, start_to_close_timeout=STEP_TIMEOUT)
            else:
                await workflow.execute_local_activity(noop, start_to_close_timeout=STEP_TIMEOUT)
        _upsert(upserts[1], "RESOLVED")
        return len(steps)


def _upsert(times: int, state: str) -> None:
    for _ in range(times):
        workflow.upsert_search_attributes([EXECUTION_STATE.value_set(state)])


async def shape_of(client: Client, workflow_id: str) -> Shape:
    """The steps and signals of a finished workflow's history."""
    steps, signals, patches = [], 0, 0
    other: dict[str, int] = {}
    async for event in client.get_workflow_handle(workflow_id).fetch_history_events():
        kind = EventType.Name(event.event_type).removeprefix("EVENT_TYPE_")
        marker = event.marker_recorded_event_attributes.marker_name
        if kind == "ACTIVITY_TASK_SCHEDULED":
            steps.append("a")
        elif kind == "MARKER_RECORDED" and marker == "core_local_activity":
            steps.append("l")
        elif kind == "MARKER_RECORDED" and marker == "core_patch":
            patches += 1
        elif kind == "WORKFLOW_EXECUTION_SIGNALED":
            signals += 1
        other[kind] = other.get(kind, 0) + 1
    upserts = max(0, other.get("UPSERT_WORKFLOW_SEARCH_ATTRIBUTES", 0) - patches)
    return Shape("".join(steps), max(signals, 1), other, patches, upserts,
                 other.get("WORKFLOW_PROPERTIES_MODIFIED", 0))


async def run_baseline(client: Client, task_queue: str, shape: Shape, count: int,
                       concurrency: int, *, visible: bool = False) -> dict:
    """Signal-with-start `count` no-op orders, `concurrency` at a time; wait for all of them.

    `visible` adds what the order does for operators: started with its `OrderId` search
    attribute, the same number of patch markers, search-attribute upserts and memo updates.
    """
    visibility = Visibility(shape.patches, shape.upserts, shape.memos) if visible else None
    ids = [f"bench-noop-{uuid.uuid4()}" for _ in range(count)]
    queue: asyncio.Queue[str] = asyncio.Queue()
    for workflow_id in ids:
        queue.put_nowait(workflow_id)

    async def starter() -> None:
        while not queue.empty():
            workflow_id = queue.get_nowait()
            attributes = TypedSearchAttributes([SearchAttributePair(ORDER_ID, workflow_id)])
            await client.start_workflow(WORKFLOW, args=[shape.steps, shape.signals, visibility],
                                        id=workflow_id, task_queue=task_queue,
                                        start_signal="notice", start_signal_args=[1],
                                        search_attributes=attributes if visible else None)
            for _ in range(shape.signals - 1):
                await client.get_workflow_handle(workflow_id).signal("notice", 1)

    started = time.perf_counter()
    await asyncio.gather(*(starter() for _ in range(concurrency)))
    for workflow_id in ids:
        await client.get_workflow_handle(workflow_id).result()
    elapsed = time.perf_counter() - started
    return {"orders": count, "seconds": elapsed, "per_s": count / elapsed}


async def serve(address: str, task_queue: str, sandboxed: bool) -> None:
    """The baseline's worker, until killed."""
    client = await Client.connect(address)
    runner = {} if sandboxed else {"workflow_runner": UnsandboxedWorkflowRunner()}
    async with Worker(client, task_queue=task_queue, workflows=[NoopOrder],
                      activities=[noop], **runner):
        await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--serve", nargs=2, metavar=("ADDRESS", "TASK_QUEUE"), required=True)
    parser.add_argument("--sandboxed", action="store_true")
    args = parser.parse_args()
    address, task_queue = args.serve
    asyncio.run(serve(address, task_queue, args.sandboxed))


if __name__ == "__main__":
    main()
