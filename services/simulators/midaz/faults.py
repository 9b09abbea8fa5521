"""Fault plan: make the next N calls to a route misbehave."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

# Kinds that only make sense where a write happens (the transaction-create routes).
WRITE_KINDS = frozenset({"reject", "write_without_proof", "timeout_after_write"})

FaultKind = Literal["error", "timeout", "reject", "write_without_proof", "timeout_after_write"]


class Fault(BaseModel):
    """One fault rule, as posted to `/_sim/faults`.

    - `error`: answer `status`/`code` before anything happens (key never claimed).
    - `timeout`: hold the request `delay_s`, then 504, no effect.
    - `reject`: after the key is claimed, fail with `code` (e.g. a 422 route code); the key
      is released, as Midaz does for every failure before balances move.
    - `write_without_proof`: move balances, then answer 500 `code` (default `0095`) and keep
      the key claimed-but-empty, so retries get 409 `0084` until the TTL; the transaction
      shows up in reads after `recovery_s` (default: the configured lag).
    - `timeout_after_write`: complete the write, then hold the response `delay_s`.
    """

    model_config = ConfigDict(extra="forbid")

    route: str = Field("transactions.create.*", description="route name or glob")
    kind: FaultKind = "error"
    count: int = Field(1, ge=1)
    status: int | None = Field(None, ge=400, le=599)
    code: str | None = None
    delay_s: float = Field(30.0, ge=0)
    recovery_s: float | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _check(self) -> Fault:
        if self.kind == "reject" and self.code is None:
            raise ValueError("reject needs a Midaz code (e.g. 0113)")
        if self.kind == "error" and self.status is None and self.code is None:
            raise ValueError("error needs a status or a code")
        if self.kind in WRITE_KINDS and not self.route.startswith("transactions.create"):
            raise ValueError(f"{self.kind} applies only to transactions.create.* routes")
        return self

