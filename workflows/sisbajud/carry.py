"""What an order's run hands to the next one when it continues as new in the middle of a wait."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from activities.sisbajud.contracts.ledger import Plan, WriteKind, WriteOutcome
from activities.sisbajud.contracts.orders import NoticeSignal, Order, OrderState

# Marks runs that may continue as new: a run replaying a history from before it never does.
CONTINUE_AS_NEW_PATCH = "sisbajud-continue-as-new"
# Marks runs that send the progress states (ACCEPTED, EXECUTING, MONITORING, AWAITING_…).
STATES_PATCH = "sisbajud-execution-states"
# Marks runs whose claim of a revision queues its ACCEPTED result in the same transaction.
ACCEPTED_IN_CLAIM_PATCH = "sisbajud-accepted-in-claim"
# A run grows at least this much before it may continue as new, so a fresh run that starts
# above a tiny threshold waits instead of continuing as new again and again.
MIN_RUN_EVENTS = 10


class WaitKind(StrEnum):
    """Which wait the next run resumes."""

    MONITOR = "MONITOR"  # a write without proof: re-reads and heartbeats
    HUMAN = "HUMAN"  # a human decision: the person's resolution
    DEFERRED = "DEFERRED"  # a deferred write: sent again each heartbeat period
    PARENT = "PARENT"  # a DESBLOQUEIO whose parent is still unknown


class Wait(BaseModel):
    """One revision's wait, with the counters it needs to resume where it was."""

    model_config = ConfigDict(frozen=True)

    kind: WaitKind
    order: Order
    plan: Plan | None = None
    write_kind: WriteKind | None = None
    # Which of the plan-and-write attempts (REPLANS) the write belongs to.
    attempt: int = 0
    # MONITOR: when the write went out, the beat schedule and what the beats saw.
    sent_at: datetime | None = None
    state: OrderState = OrderState.INDETERMINATE
    next_beat: datetime | None = None
    beats: int = 0
    unchanged: int = 0
    last_evidence: str | None = None
    # DEFERRED: the last answer to the write.
    outcome: WriteOutcome | None = None
    # PARENT: when waiting for the parent gives up.
    waits_until: datetime | None = None


class Carry(BaseModel):
    """The run's state that outlives it: revisions seen, buffered notices, the open wait."""

    model_config = ConfigDict(frozen=True)

    seen: list[int]
    executed: list[int]
    last_state: OrderState | None = None
    pending: list[NoticeSignal]
    nudged: bool = False
    wait: Wait
