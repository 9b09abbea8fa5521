"""Fault plan for the Mensageria simulator: the next N calls to a route misbehave."""

from __future__ import annotations

import fnmatch
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Fault(BaseModel):
    """One rule posted to `/_sim/faults`.

    - `status`: answer `status` (default 503; 401, 429, 5xx, any other 4xx) without doing
      anything; `retry_after` adds a `Retry-After` header.
    - `timeout`: hold the request `delay_s`, then 504.
    - `delay`: hold the request `delay_s`, then answer as usual (a slow but healthy API).
    - `accept_then_fail`: (results only) record the result, then answer `status` (default 500),
      so the sender retries a result that was in fact received.
    """

    model_config = ConfigDict(extra="forbid")

    route: str = Field("*", description="orders.get | results.post | glob")
    kind: Literal["status", "timeout", "accept_then_fail", "delay"] = "status"
    status: int | None = Field(None, ge=400, le=599)
    count: int = Field(1, ge=1)
    delay_s: float = Field(30.0, ge=0)
    retry_after: int | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _check(self) -> Fault:
        if self.kind == "accept_then_fail" and not fnmatch.fnmatchcase("results.post", self.route):
            raise ValueError("accept_then_fail applies only to results.post")
        if self.status is None:
            self.status = 500 if self.kind == "accept_then_fail" else 503
        return self

