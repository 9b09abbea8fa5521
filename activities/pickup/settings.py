"""Settings of the pickup domain: durations, cadences and the turnstile controller."""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator

from activities.pickup.contracts.schools import (
    DAY_START_PATTERN,
    DEFAULT_DAY_START,
    DEFAULT_DAY_TIME_ZONE,
    MAX_TIMEOUT_MINUTES,
    iana_zone,
)
from shared.web_urls import web_url


class PickupSettings(BaseModel):
    """`Pickup:*` — durations, cadences and the turnstile controller of the pickup board."""

    # The seed's IONCLASS_READY_TIMEOUT_MINUTES (also read under that name).
    ready_timeout_minutes: float = Field(default=60.0, gt=0, le=MAX_TIMEOUT_MINUTES)
    # Default for new schools; each school carries its own arrival-signal timeout.
    arrival_timeout_minutes: float = Field(default=15.0, gt=0, le=MAX_TIMEOUT_MINUTES)
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
    # How long queue snapshots (the status page's history) are kept.
    queue_snapshot_retention_days: float = Field(default=7.0, gt=0, le=3660)
    link_sweep_time_zone: str = "America/Sao_Paulo"
    # Defaults for new schools; each school carries its own zone and day start ("HH:MM").
    day_time_zone: str = DEFAULT_DAY_TIME_ZONE
    day_start: str = Field(default=DEFAULT_DAY_START, pattern=DAY_START_PATTERN)
    day_cycle_minutes: float = Field(default=1.0, gt=0)
    sweep_batch_size: int = Field(default=500, ge=1, le=10_000)
    # Roster lines written per transaction: SQLite's write lock is held one batch at a time.
    roster_batch_lines: int = Field(default=100, ge=1, le=5000)
    sse_poll_seconds: float = Field(default=1.0, gt=0)
    sse_keepalive_seconds: float = Field(default=15.0, gt=0)
    turnstile_url: str | None = None
    turnstile_login: str = "admin"
    turnstile_password: SecretStr | None = None
    turnstile_timeout_seconds: float = Field(default=5.0, gt=0)
    monitor_token: SecretStr | None = None
    # School-scoped API keys, school id -> key (`ESTEIRA_PICKUP__SCHOOL_KEYS='{"3": "…"}'`):
    # such a key reaches only that school's pickup records; the global key reaches all.
    school_keys: dict[int, SecretStr] = Field(default_factory=dict)
    ledger_retry_initial_seconds: float = Field(default=1.0, gt=0)
    ledger_retry_max_seconds: float = Field(default=60.0, gt=0)
    notification_webhook_url: str | None = None
    # Standard Webhooks secret (`whsec_<base64>`) signing each notification; required with
    # the URL outside Development.
    notification_webhook_secret: SecretStr | None = None
    # A notification that keeps failing is retried on its own, with exponential backoff from
    # the initial delay up to the cap, then set `failed` (alarm, operator requeue).
    notification_max_attempts: int = Field(default=8, ge=1)
    notification_retry_initial_seconds: float = Field(default=30.0, gt=0)
    notification_retry_max_seconds: float = Field(default=3600.0, gt=0)
    # The guardian page: the address guardians reach the dashboard at, put in the one-time
    # sign-in links (None: `Notifications:PublicUrl`, else this host's API port). Never taken
    # from a request's Host header, which whoever asks for a link controls.
    guardian_page_url: str | None = None
    # How long a sign-in link works (once), and how many a guardian's identity / one client
    # address may ask for in that long (the same answer whether or not a guardian matched).
    sign_in_link_minutes: float = Field(default=15.0, gt=0, le=MAX_TIMEOUT_MINUTES)
    sign_in_link_max_requests: int = Field(default=3, ge=1)
    sign_in_link_max_per_address: int = Field(default=20, ge=1)

    # Web URLs only: a file:// URL must not reach the HTTP client, nor a guardian's link.
    _web_urls = field_validator("turnstile_url", "notification_webhook_url",
                                "guardian_page_url")(web_url)

    @field_validator("day_time_zone", "link_sweep_time_zone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        return iana_zone(value)  # an unknown zone fails at startup, not at midnight

    @model_validator(mode="before")
    @classmethod
    def _seed_ready_timeout(cls, data: Any) -> Any:
        seed_value = os.environ.get("IONCLASS_READY_TIMEOUT_MINUTES")
        if seed_value and isinstance(data, dict) and "ready_timeout_minutes" not in data:
            data = {**data, "ready_timeout_minutes": seed_value}
        return data
