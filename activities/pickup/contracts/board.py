"""Contract of the `pickup` domain: task queue, workflow ids, inputs, results, error codes."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

# Re-exported: the names are defined once, in `pickup_names`.
from activities.pickup.contracts.names import KICK_SIGNAL as KICK_SIGNAL
from activities.pickup.contracts.names import TASK_QUEUE as TASK_QUEUE

DOMAIN = "pickup"
# The seed's reason string; the monitor tells "picked up" from "timed out" by it.
READY_TIMEOUT_REASON = "tempo de prontidão esgotado"
ARRIVAL_TIMEOUT_REASON = "sinal de chegada expirado"
# Every student starts a school day AT_SCHOOL with this reason (the day cycle).
DAY_START_REASON = "novo dia letivo"


class PickupState(StrEnum):
    """Where a student is in today's pickup."""

    AT_SCHOOL = "AT_SCHOOL"
    AWAITING = "AWAITING"
    READY = "READY"
    PICKED_UP = "PICKED_UP"


class Kind(StrEnum):
    """Permanent entities have no validity dates; temporary ones end at `valid_until`."""

    PERMANENT = "permanent"
    TEMPORARY = "temporary"


class AuthorizationStatus(StrEnum):
    """Status of an authorized person (and, minus `revoked`, of an early release)."""

    PENDING = "pending"
    APPROVED = "approved"
    ADJUSTMENTS_REQUESTED = "adjustments_requested"
    EXPIRED = "expired"
    REVOKED = "revoked"
    USED = "used"


# The seed: pending, approved and adjustments-requested ones become expired.
EXPIRABLE = (
    AuthorizationStatus.PENDING,
    AuthorizationStatus.APPROVED,
    AuthorizationStatus.ADJUSTMENTS_REQUESTED,
)


class SyncStatus(StrEnum):
    """Whether the turnstile agrees with us about an authorized person."""

    NONE = "none"
    PENDING = "pending"
    SYNCED = "synced"
    FAILED = "failed"


class LedgerCommand(StrEnum):
    """An outbound command to a turnstile controller."""

    GRANT = "grant"
    REVOKE = "revoke"


class LedgerStatus(StrEnum):
    """`pending` until the controller confirms; `failed` when it refused (operator retries)."""

    PENDING = "pending"
    CONFIRMED = "confirmed"
    FAILED = "failed"


class NotificationStatus(StrEnum):
    """A guardian notification in the outbox."""

    PENDING = "pending"
    SENT = "sent"
    FAILED = "failed"


class NotificationKind(StrEnum):
    """What a guardian is told (the webhook's `kind`)."""

    ARRIVAL_ACKNOWLEDGED = "arrival-acknowledged"
    READY = "student-ready"
    PICKED_UP = "picked-up"
    REVERTED = "pickup-reverted"
    EARLY_RELEASE_APPROVED = "early-release-approved"
    # Not queued in the outbox: sent at once, carrying a one-time sign-in link.
    SIGN_IN_LINK = "sign-in-link"


class TokenKind(StrEnum):
    """A guardian's access token: the app's bearer token, or the guardian page's cookie."""

    APP = "app"
    WEB = "web"


class SubjectKind(StrEnum):
    """Who a turnstile credential belongs to."""

    STUDENT = "student"
    AUTHORIZED_PERSON = "authorized_person"
    GUARDIAN = "guardian"


class ArrivalStatus(StrEnum):
    """An "I'm arriving" signal: open until progressed, or expired by its timeout."""

    OPEN = "open"
    COMPLETED = "completed"
    EXPIRED = "expired"


class EventType(StrEnum):
    """Broadcast events, pushed over SSE."""

    STUDENT_STATE_CHANGED = "StudentStateChanged"
    STUDENT_ROSTER_CHANGED = "StudentRosterChanged"


class Sweep(StrEnum):
    """The seed's seven scheduled sweeps."""

    EXPIRE_AUTHORIZATIONS = "expire-authorizations"
    EXPIRE_EARLY_RELEASES = "expire-early-releases"
    DELETE_EXPIRED_LINKS = "delete-expired-links"
    CLOSE_ARRIVALS = "close-arrivals"
    REVERT_READY = "revert-ready"
    PRUNE_TOKENS = "prune-tokens"
    QUEUE_SNAPSHOT = "queue-snapshot"


class TimerKind(StrEnum):
    """Per-entity durable timers."""

    READY = "ready"
    ARRIVAL = "arrival"
    AUTHORIZATION = "authorization"
    EARLY_RELEASE = "early-release"


class Outbox(StrEnum):
    """Queues drained by `pickup-drain` workflows."""

    LEDGER = "ledger"
    NOTIFICATIONS = "notifications"


class PickupErrorCode(StrEnum):
    """Stable codes of the pickup domain."""

    VERSION_CONFLICT = "pickup.version-conflict"
    INVALID_TRANSITION = "pickup.invalid-transition"
    ACCESS_DENIED = "pickup.access-denied"
    TOKEN_MISSING = "pickup.token-missing"
    TOKEN_INVALID = "pickup.token-invalid"
    MONITOR_UNAUTHORIZED = "pickup.monitor-unauthorized"
    INVALID_VALIDITY = "pickup.invalid-validity"
    STATUS_CONFLICT = "pickup.status-conflict"
    LEDGER_NOT_FAILED = "pickup.ledger-not-failed"
    TURNSTILE_UNAVAILABLE = "pickup.turnstile-unavailable"
    TURNSTILE_REJECTED = "pickup.turnstile-rejected"
    NOTIFICATION_FAILED = "pickup.notification-failed"
    CREDENTIAL_TAKEN = "pickup.credential-taken"
    MONITOR_WRONG_SCHOOL = "pickup.monitor-wrong-school"
    IN_USE = "pickup.in-use"
    ROSTER_REFUSED = "pickup.roster-refused"
    SCHOOL_SCOPE = "pickup.school-scope"
    NOTIFICATION_NOT_FAILED = "pickup.notification-not-failed"
    SIGN_IN_LINK_INVALID = "pickup.sign-in-link-invalid"


PICKUP_RETRYABLE = frozenset({PickupErrorCode.TURNSTILE_UNAVAILABLE})


def sweep_schedule_id(sweep: Sweep) -> str:
    """`pickup-sweep:<sweep>`; the schedule appends the action time to its workflows' ids."""
    return f"pickup-sweep:{sweep}"


def timer_workflow_id(kind: TimerKind, entity_id: int, version: int = 0) -> str:
    """`pickup-ready:<student>:<version>`, `pickup-arrival:<id>`, `pickup-authorization:<id>`,
    `pickup-early-release:<id>`.

    A READY timer is scoped to the version that entered READY, so each READY episode of a
    student has its own timer and a stale one can only lose its CAS.
    """
    if kind is TimerKind.READY:
        return f"pickup-ready:{entity_id}:{version}"
    return f"pickup-{kind}:{entity_id}"


def drain_workflow_id(outbox: Outbox, key: int = 0) -> str:
    """`pickup-ledger:<controller>` (one per turnstile controller) or `pickup-notifications:0`."""
    return f"pickup-{outbox}:{key}"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class RunSweepInput(_Frozen):
    """Run one sweep; `now` defaults to the workflow's time."""

    sweep: Sweep
    now: datetime | None = None
    batch_size: int = 500


class SweepResult(_Frozen):
    """What a sweep changed; `skipped` counts rows whose CAS lost a race."""

    sweep: Sweep
    changed: int = 0
    skipped: int = 0
    ledger_enqueued: int = 0
    notifications_enqueued: int = 0
    events: int = 0


class RunDayCycleInput(_Frozen):
    """Start the school day wherever it began by `now` (defaults to the workflow's time)."""

    now: datetime | None = None
    batch_size: int = 500


class DayCycleResult(_Frozen):
    """What a day-cycle run reset: students, READY grants revoked, arrivals closed."""

    schools: int = 0
    students: int = 0
    revoked: int = 0
    arrivals_closed: int = 0
    skipped: int = 0


class TimerInput(_Frozen):
    """A per-entity timer: at `deadline`, apply the expiry to `entity_id` if still due."""

    kind: TimerKind
    entity_id: int
    version: int = 0
    deadline: datetime
    # For the Temporal UI's SchoolId / StudentId (older payloads lack them).
    school_id: int | None = None
    student_id: int | None = None


class TimerResult(_Frozen):
    """Whether the timer changed anything (False: someone else got there first)."""

    kind: TimerKind
    entity_id: int
    changed: bool


class DrainInput(_Frozen):
    """Drain one outbox (ledger of one controller, or guardian notifications)."""

    outbox: Outbox
    key: int = 0
    batch_size: int = 200
    retry_initial_seconds: float = 1.0
    retry_max_interval_seconds: float = 60.0
    idle_seconds: float = 30.0
    rounds: int = 0


class DrainBatchInput(_Frozen):
    """One delivery round of a drain workflow."""

    outbox: Outbox
    key: int = 0
    batch_size: int = 200


class DrainResult(_Frozen):
    """One round: delivered, refused (marked failed) and still waiting."""

    delivered: int = 0
    failed: int = 0
    remaining: int = 0
    # Notifications backing off: the drain waits this long (or for a kick) for the next one.
    retry_in_seconds: float | None = None
