"""Bodies of the SISBAJUD execution API as far as the seed fixes them."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

# The seed's two result enums, as the contract spells them for both sides of the wire.
from activities.sisbajud.contracts.orders import Effect, ExecutionState

Money = Annotated[str, StringConstraints(pattern=r"^\d+\.\d{2,}$", strict=True)]


class ExecutionResult(BaseModel):
    """A result sent by the executor; fields beyond the seed's two enums pass through."""

    model_config = ConfigDict(extra="allow")

    executionState: ExecutionState
    effect: Effect
    reasonCode: str | None = None
    # Amounts are decimal strings with (at least) two places: "850.00", never 850 or "850".
    requestedAmount: Money | None = None
    executedAmount: Money | None = None
    blockableTotal: Money | None = None
    blockableSalaryTotal: Money | None = None


class SeedOrder(BaseModel):
    """An order as the simulator serves it. The real schema is not public, so every field
    beyond `orderId` / `revision` is free-form and returned exactly as seeded."""

    model_config = ConfigDict(extra="allow")

    orderId: str = Field(min_length=1)
    revision: int = Field(1, ge=1)


class WithdrawIn(BaseModel):
    """How a withdrawn order answers: 404 or 410."""

    model_config = ConfigDict(extra="forbid")

    status: Literal[404, 410] = 410
