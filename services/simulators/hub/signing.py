"""Standard Webhooks v1 signing, as the Streaming Hub (the sender) does it."""

from __future__ import annotations

import base64
import hashlib
import hmac

PREFIX = "whsec_"


def secret_bytes(secret: str) -> bytes:
    """Key bytes of a `whsec_<base64>` secret (the prefix is optional)."""
    return base64.b64decode(secret.removeprefix(PREFIX), validate=True)


def sign(secret: str, msg_id: str, timestamp: int | str, body: bytes) -> str:
    """One `v1,<base64 HMAC-SHA256("{id}.{timestamp}.{body}")>` entry."""
    content = f"{msg_id}.{timestamp}.".encode() + body
    mac = hmac.new(secret_bytes(secret), content, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


def signature_header(secrets: list[str], msg_id: str, timestamp: int | str,
                     body: bytes) -> str:
    """The `webhook-signature` value: one entry per secret, space-separated."""
    return " ".join(sign(s, msg_id, timestamp, body) for s in secrets)
