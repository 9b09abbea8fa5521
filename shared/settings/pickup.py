"""Settings of the pickup domain: durations, cadences and the turnstile controller."""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel, Field, SecretStr, model_validator


class PickupSettings(BaseModel):
    """`Pickup:*` — durations, cadences and the turnstile controller of the pickup board."""

    # The seed's IONCLASS_READY_TIMEOUT_MINUTES (also read under that name).
    ready_timeout_minutes: float = Field(default=60.0, gt=0)
    # Default for new schools; each school carries its own arrival-signal timeout.
    arrival_timeout_minutes: float = Field(default=15.0, gt=0)
    token_ttl_hours: float = Field(default=24.0 * 30, gt=0)
    token_prune_after_hours: float = Field(default=24.0, ge=0)
    schedules_enabled: bool = True
    timers_enabled: bool = True
    authorization_sweep_minutes: float = Field(default=60.0, gt=0)
    early_release_sweep_minutes: float = Field(default=60.0, gt=0)
    arrival_sweep_minutes: float = Field(default=1.0, gt=0)
    ready_sweep_minutes: float = Field(default=5.0, gt=0)
    token_sweep_hours: float = Field(default=24.0, gt=0)
    queue_snapshot_minutes: float = Field(default=5.0, gt=0)
    link_sweep_time_zone: str = "America/Sao_Paulo"
    sweep_batch_size: int = Field(default=500, ge=1, le=10_000)
    sse_poll_seconds: float = Field(default=1.0, gt=0)
    sse_keepalive_seconds: float = Field(default=15.0, gt=0)
    turnstile_url: str | None = None
    turnstile_login: str = "admin"
    turnstile_password: SecretStr | None = None
    turnstile_timeout_seconds: float = Field(default=5.0, gt=0)
    monitor_token: SecretStr | None = None
    ledger_retry_initial_seconds: float = Field(default=1.0, gt=0)
    ledger_retry_max_seconds: float = Field(default=60.0, gt=0)
    notification_webhook_url: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _seed_ready_timeout(cls, data: Any) -> Any:
        seed_value = os.environ.get("IONCLASS_READY_TIMEOUT_MINUTES")
        if seed_value and isinstance(data, dict) and "ready_timeout_minutes" not in data:
            data = {**data, "ready_timeout_minutes": seed_value}
        return data
