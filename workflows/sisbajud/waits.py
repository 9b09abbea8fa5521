"""Waiting in an order's run: durable timers, and handing a long wait to a new run."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import datetime

from temporalio import workflow

from workflows.sisbajud.state import OrderRun

with workflow.unsafe.imports_passed_through():
    from workflows.sisbajud.carry import CONTINUE_AS_NEW_PATCH, MIN_RUN_EVENTS, Wait


def roll_due(run: OrderRun) -> bool:
    """Whether this run's history is long enough to hand its wait to a new run."""
    info = workflow.info()
    length = info.get_current_history_length()
    if run.roll_off or length < run.run_start_events + MIN_RUN_EVENTS:
        return False
    return (info.is_continue_as_new_suggested()
            or length >= run.options.continue_as_new_after_events)


async def roll(run: OrderRun, wait: Wait) -> None:
    """Continue as new into `wait` when due; returns when not due, or when a resolution or
    a newer revision arrived that this run handles itself."""
    if not roll_due(run):
        return
    if not workflow.patched(CONTINUE_AS_NEW_PATCH):
        run.roll_off = True  # replaying a run from before: it keeps its history
        return
    # Handlers finish here: an update accepted now is answered by this run, not lost.
    await workflow.wait_condition(
        lambda: workflow.all_handlers_finished() or run.interrupted(wait.order))
    if run.interrupted(wait.order):
        return
    workflow.continue_as_new(run.next_run(wait))


async def sleep_until(until: datetime | None, wake: Callable[[], bool]) -> None:
    """Sleep on a durable timer until `until` (forever if None) or until `wake()`."""
    seconds = None if until is None else (until - workflow.now()).total_seconds()
    if seconds is not None and seconds <= 0:
        return
    with contextlib.suppress(TimeoutError):
        await workflow.wait_condition(wake, timeout=seconds)
