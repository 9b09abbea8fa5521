"""Settings of the turnstile simulator (env prefix `TURNSTILE_SIM_`)."""

from __future__ import annotations

from typing import Literal

from pydantic_settings import BaseSettings, SettingsConfigDict


class TurnstileSimSettings(BaseSettings):
    """How the simulated Control iD controller behaves and where it pushes events."""

    model_config = SettingsConfigDict(env_prefix="TURNSTILE_SIM_")

    host: str = "127.0.0.1"
    port: int = 8095
    # Factory credentials of Control iD devices; a simulator only, never a real secret.
    login: str = "admin"
    password: str = "admin"
    device_id: int = 478435
    device_tz: str = "America/Sao_Paulo"
    # The real idle timeout is undocumented; an hour matches the community emulator.
    session_ttl_seconds: float = 3600.0
    monitor_url: str | None = None
    monitor_timeout_ms: int = 5000
    push_retries: int = 3
    push_retry_delay_seconds: float = 5.0
    catra_timeout_seconds: float = 10.0
    exit_direction: Literal["clockwise", "anticlockwise"] = "clockwise"
    seed_defaults: bool = True
