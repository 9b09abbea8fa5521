"""What one run of an order's workflow knows, passed explicitly to each of its steps."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.sisbajud.contracts.orders import (
        NoticeSignal,
        Order,
        OrderOptions,
        OrderState,
        ResolveDecisionInput,
        ResolveDecisionResult,
        RunOrderInput,
        decision_deadline,
    )
    from workflows.sisbajud.carry import Carry, Wait, WaitKind


@dataclass
class OrderRun:
    """Revisions seen and executed, buffered notices, the open decision and its answers."""

    order_id: str
    options: OrderOptions
    pending: list[NoticeSignal] = field(default_factory=list)
    seen: set[int] = field(default_factory=set)
    executed: list[int] = field(default_factory=list)
    last_state: OrderState | None = None
    # The revision whose human decision accepts a resolution now, and the answers.
    open_decision: int | None = None
    resolutions: dict[int, ResolveDecisionInput] = field(default_factory=dict)
    resolved: dict[int, ResolveDecisionResult] = field(default_factory=dict)
    # Revisions whose resolution is being checked against the ledger (a second one waits).
    resolving: set[int] = field(default_factory=set)
    nudged: bool = False
    # History length when this run started, and whether its history predates continue-as-new.
    run_start_events: int = 0
    roll_off: bool = False

    def restore(self, carry: Carry) -> None:
        """The previous run's state, before any handler of this run sees a message."""
        self.seen, self.executed = set(carry.seen), list(carry.executed)
        self.last_state, self.pending = carry.last_state, list(carry.pending)
        self.nudged = carry.nudged
        wait = carry.wait
        if wait.kind == WaitKind.HUMAN or (wait.kind == WaitKind.MONITOR
                                           and wait.state == OrderState.HUMAN_DECISION):
            self.open_decision = wait.order.revision

    def next_run(self, wait: Wait) -> RunOrderInput:
        """The input of the run that continues this one into `wait`."""
        carry = Carry(seen=sorted(self.seen), executed=self.executed,
                      last_state=self.last_state, pending=self.pending, nudged=self.nudged,
                      wait=wait)
        return RunOrderInput(order_id=self.order_id, options=self.options,
                             carry=carry.model_dump(mode="json"))

    def interrupted(self, order: Order) -> bool:
        """A resolution of this revision, or a newer revision, arrived."""
        return order.revision in self.resolutions or self.newer_pending(order)

    def newer_pending(self, order: Order) -> bool:
        """A notice of a newer revision than `order`'s waits."""
        return any(n.revision > order.revision for n in self.pending)

    def beat_timeout(self) -> timedelta:
        """How soon a worker lost mid-activity is noticed (the activity beats a third of it)."""
        return timedelta(seconds=self.options.activity_heartbeat_timeout_seconds)

    def decide_at(self, order: Order) -> datetime | None:
        """When an order still without an answer goes to a person: deadline minus margin."""
        return decision_deadline(order.deadline, self.options.deadline_margin_seconds)
