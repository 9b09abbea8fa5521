"""What a door hands the operator actions: the reason, or a person's resolution."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from pydantic import ConfigDict, Field, field_validator

from activities.sisbajud.contracts.orders import Effect, ReasonCode
from shared.wire import WireModel

# What a confirmation must repeat of the proposal it confirms.
DECIDED_FIELDS = {"effect", "reason_code", "executed_amount", "transaction_id"}


class ActionIn(WireModel):
    """Why the operator acts (the actor comes from the credential)."""

    model_config = ConfigDict(extra="forbid")

    reason: str = Field(min_length=1, max_length=2000)


class ResolutionIn(WireModel):
    """What the person decided: the final result, who they are and why."""

    model_config = ConfigDict(extra="forbid")

    # The credential names the actor; a name here must be that same one (old clients).
    actor: str | None = Field(None, min_length=1, max_length=200)
    reason: str = Field(min_length=1, max_length=2000)
    effect: Effect
    reason_code: ReasonCode | None = None
    executed_amount: Decimal | None = Field(None, ge=0)
    transaction_id: str | None = Field(None, max_length=64)

    @field_validator("effect")
    @classmethod
    def _known(cls, effect: Effect) -> Effect:
        if effect == Effect.INDETERMINATE:
            raise ValueError("a resolution must say what the effect was")
        return effect

    def decided(self) -> dict[str, Any]:
        """The part of the resolution a second person must confirm unchanged (as recorded:
        `effect`, `reasonCode`, `executedAmount`, `transactionId`)."""
        return self.model_dump(mode="json", include=DECIDED_FIELDS, by_alias=True)
