"""Planning activities: read the CRM, the ledger and the store; decide; write nothing."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from decimal import Decimal

from sqlmodel import select
from temporalio import activity

from activities.sisbajud.clients import (
    LedgerActivities,
    ReadRefused,
    UnknownInstitution,
    UpstreamError,
)
from activities.sisbajud.contracts.ledger import Leg, Plan, PlanInput, PlanKind
from activities.sisbajud.contracts.names import (
    PLAN_BLOCK_ACTIVITY,
    PLAN_INFO_ACTIVITY,
    PLAN_RELEASE_ACTIVITY,
)
from activities.sisbajud.contracts.orders import (
    Effect,
    HumanReason,
    OrderState,
    ReasonCode,
    block_account_alias,
    write_idempotency_key,
)
from activities.sisbajud.errors import SisbajudErrorCode, fail
from activities.sisbajud.models import SisbajudOrder, SisbajudWrite
from activities.sisbajud.rules import (
    ZERO,
    block_legs,
    info_totals,
    own_funds,
    release_amount,
    release_legs,
    restrict,
)
from activities.sisbajud.subjects import active_accounts
from shared.heartbeat import heartbeats


def _moved(write: SisbajudWrite) -> list[Leg]:
    """The legs an applied write moved: as the ledger showed them to a person's resolution,
    else the write's own (Midaz answered it applied)."""
    legs = write.applied_legs if write.applied_legs is not None else write.legs
    return [Leg.model_validate(leg) for leg in legs]


def _resolve(effect: Effect, reason: ReasonCode, **fields) -> Plan:
    return Plan(kind=PlanKind.RESOLVE, effect=effect, reason_code=reason, **fields)


@contextlib.contextmanager
def upstream_errors() -> Iterator[None]:
    """Map ledger failures to retryable (transient) or final activity errors; a refused read
    is its own final error (the order's workflow raises an alarm and asks a person)."""
    try:
        yield
    except UnknownInstitution as exc:
        raise fail(SisbajudErrorCode.INSTITUTION_UNCONFIGURED, f"institution {exc}") from exc
    except ReadRefused as exc:
        raise fail(SisbajudErrorCode.MIDAZ_READ_REFUSED, f"Midaz refused a read: {exc}") from exc
    except UpstreamError as exc:
        code = (SisbajudErrorCode.MIDAZ_UNAVAILABLE if exc.retryable
                else SisbajudErrorCode.MIDAZ_REFUSED)
        raise fail(code, f"Midaz read failed: {exc}") from exc


class PlanActivities(LedgerActivities):
    """BLOQUEIO, DESBLOQUEIO and info-request planning against one institution's Midaz."""

    @activity.defn(name=PLAN_BLOCK_ACTIVITY)
    @heartbeats
    async def plan_block(self, request: PlanInput) -> Plan:
        """Own funds of the eligible accounts, up to what the order still has open."""
        order = request.order
        alias = block_account_alias(order.order_id)
        with upstream_errors():
            midaz = self._midaz(order.institution_id)
            accounts = await active_accounts(midaz, order.document)
            if not accounts:
                return _resolve(Effect.NONE, ReasonCode.NO_CLIENT, block_alias=alias)
            accounts = restrict(accounts, order.agency, order.account)
            if not accounts:
                return _resolve(Effect.NONE, ReasonCode.NO_CLIENT, block_alias=alias,
                                detail="no active account matches the order's restriction")
            held = own_funds(await midaz.default_balance(alias))
        open_amount = order.amount - held
        if open_amount <= 0:
            return _resolve(Effect.FULL, ReasonCode.BLOCKED_TOTAL, block_alias=alias,
                            detail=f"the block account already holds {held}")
        legs = block_legs(accounts, open_amount, order.allow_salary_accounts)
        total = sum((leg.amount for leg in legs), ZERO)
        if total <= 0:
            return _resolve(Effect.NONE, ReasonCode.NO_BALANCE, block_alias=alias,
                            open_amount=open_amount)
        return Plan(kind=PlanKind.WRITE, legs=legs, total=total, open_amount=open_amount,
                    block_alias=alias)

    @activity.defn(name=PLAN_RELEASE_ACTIVITY)
    @heartbeats
    async def plan_release(self, request: PlanInput) -> Plan:
        """min(order amount, parent's remaining, block balance), back to the parent's sources."""
        order = request.order
        parent_id = order.parent_order_id
        if not parent_id:
            return _resolve(Effect.NONE, ReasonCode.PARENT_UNRESOLVED)
        alias = block_account_alias(parent_id)
        async with self._sessions() as session:
            parent = await session.get(SisbajudOrder, parent_id)
            if parent is None or parent.state != OrderState.RESOLVED:
                return Plan(kind=PlanKind.WAIT_PARENT, block_alias=alias,
                            detail=f"parent {parent_id} has no known effect yet")
            own_key = write_idempotency_key(order.order_id, order.revision)
            related = ((SisbajudWrite.order_id == parent_id)
                       | (SisbajudWrite.parent_order_id == parent_id))
            writes = (await session.exec(select(SisbajudWrite).where(
                related,
                SisbajudWrite.state == "APPLIED",
                SisbajudWrite.idempotency_key != own_key,
            ).order_by(SisbajudWrite.created_at))).all()
        blocks = [w for w in writes if w.kind == "block" and w.order_id == parent_id]
        releases = [w for w in writes if w.kind == "unblock"]
        parent_legs = [leg for w in blocks for leg in _moved(w)]
        returned: dict[str, Decimal] = {}
        for leg in (leg for w in releases for leg in _moved(w)):
            returned[leg.account_alias] = returned.get(leg.account_alias, ZERO) + leg.amount
        remaining = (sum((Decimal(w.applied_amount or w.total) for w in blocks), ZERO)
                     - sum(returned.values(), ZERO))
        with upstream_errors():
            balance = own_funds(await self._midaz(order.institution_id).default_balance(alias))
        amount = release_amount(order.amount, remaining, balance)
        if amount <= 0:
            return _resolve(Effect.NONE, ReasonCode.NOTHING_TO_RELEASE, block_alias=alias)
        legs = release_legs(parent_legs, returned, amount)
        if any(leg.salary for leg in legs):
            return Plan(kind=PlanKind.HUMAN, human_reason=HumanReason.SALARY_ACCOUNT_RELEASE,
                        legs=legs, total=amount, block_alias=alias,
                        detail="the release would credit a salary account")
        return Plan(kind=PlanKind.WRITE, legs=legs, total=amount, open_amount=order.amount,
                    block_alias=alias)

    @activity.defn(name=PLAN_INFO_ACTIVITY)
    @heartbeats
    async def plan_info(self, request: PlanInput) -> Plan:
        """Blockable totals, read only; an agency or an unknown account goes to a person."""
        order = request.order
        if order.agency:
            return Plan(kind=PlanKind.HUMAN, human_reason=HumanReason.INFO_AGENCY_GIVEN,
                        detail=f"the order names agency {order.agency}")
        with upstream_errors():
            accounts = await active_accounts(self._midaz(order.institution_id), order.document)
        if not accounts:
            return _resolve(Effect.NONE, ReasonCode.INFO_NON_CLIENT,
                            blockable_total=ZERO, blockable_salary_total=ZERO)
        if order.account:
            accounts = restrict(accounts, None, order.account)
            if not accounts:
                return Plan(kind=PlanKind.HUMAN, human_reason=HumanReason.INFO_UNKNOWN_ACCOUNT,
                            detail=f"the subject has no account {order.account}")
        total, salary = info_totals(accounts)
        return _resolve(Effect.FULL, ReasonCode.INFO_FULFILLED, blockable_total=total,
                        blockable_salary_total=salary)
