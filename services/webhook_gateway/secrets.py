"""Where the gateway's Standard Webhooks secrets come from."""

from __future__ import annotations

import base64
import os
import secrets
from pathlib import Path

from services.webhook_gateway.signature import SECRET_PREFIX
from shared.settings import Settings


class MissingWebhookSecretError(Exception):
    """No webhook secret is configured where one is required."""


def secret_file(settings: Settings) -> Path:
    """`data/hub-webhook-secret`: the secret generated for `esteira dev`."""
    return settings.data_dir.resolve() / "hub-webhook-secret"


def ensure_generated_secret(path: Path) -> bool:
    """Write a fresh `whsec_…` secret to `path` (mode 0600) unless one exists."""
    if path.is_file() and path.read_text().strip():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode() + "\n")
    return True


def resolve_secrets(settings: Settings, *, generate: bool = False) -> list[str]:
    """`ESTEIRA_SISBAJUD__HUB_WEBHOOK_SECRETS`, else the generated file (Development only)."""
    configured = [s.get_secret_value() for s in settings.sisbajud.hub_webhook_secrets]
    if configured:
        return configured
    path = secret_file(settings)
    if generate and settings.environment == "Development":
        ensure_generated_secret(path)
    if path.is_file() and path.read_text().strip():
        return [path.read_text().strip()]
    raise MissingWebhookSecretError(
        "No Streaming Hub webhook secret: set ESTEIRA_SISBAJUD__HUB_WEBHOOK_SECRETS "
        f"(a JSON list of whsec_… values), or run `esteira dev`, which generates {path}."
    )
