"""Settings of the Lacuna Signer simulator (env prefix `LACUNA_SIM_`)."""

from __future__ import annotations

from typing import Literal

from pydantic_settings import BaseSettings, SettingsConfigDict


class LacunaSimSettings(BaseSettings):
    """Where the simulator listens, the API key it accepts, how its participants sign."""

    model_config = SettingsConfigDict(env_prefix="LACUNA_SIM_")

    host: str = "127.0.0.1"
    port: int = 8094
    # `X-Api-Key: app|key`; a simulator only, never a real secret.
    api_key: str = "esteira-dev|lacuna-sim-key"
    # The certificate simulated participants sign with (a dev PFX and its password file).
    pfx_path: str | None = None
    pfx_password_file: str | None = None
    # "own": each participant signs with their own dev certificate (made by the simulator,
    # CA at /_sim/ca.pem); "shared": everyone signs with the PFX above.
    participant_certificates: Literal["shared", "own"] = "shared"
    # "own": where the participants' CA is kept across restarts (None: a new one each start).
    participant_ca_dir: str | None = None
    # The organization's webhook URL (its Integration page); None sends nothing.
    webhook_url: str | None = None
    webhook_timeout_seconds: float = 5.0
    # Folders that exist at start, comma-separated ids.
    folders: str = "default"
