"""What a door hands the operator actions: the reason, or a person's resolution."""

from __future__ import annotations

from decimal import Decimal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from shared.contracts.sisbajud import Effect, ReasonCode

# What a confirmation must repeat of the proposal it confirms.
DECIDED_FIELDS = ("effect", "reasonCode", "executedAmount", "transactionId")


class ActionIn(BaseModel):
    """Why the operator acts (the actor comes from the credential)."""

    model_config = ConfigDict(extra="forbid")

    reason: str = Field(min_length=1, max_length=2000)


class ResolutionIn(BaseModel):
    """What the person decided: the final result, who they are and why."""

    model_config = ConfigDict(extra="forbid")

    # The credential names the actor; a name here must be that same one (old clients).
    actor: str | None = Field(None, min_length=1, max_length=200)
    reason: str = Field(min_length=1, max_length=2000)
    effect: Effect
    reasonCode: ReasonCode | None = None
    executedAmount: Decimal | None = Field(None, ge=0)
    transactionId: str | None = Field(None, max_length=64)

    @field_validator("effect")
    @classmethod
    def _known(cls, effect: Effect) -> Effect:
        if effect == Effect.INDETERMINATE:
            raise ValueError("a resolution must say what the effect was")
        return effect

    def decided(self) -> dict:
        """The part of the resolution a second person must confirm unchanged."""
        return self.model_dump(mode="json", include=set(DECIDED_FIELDS))
