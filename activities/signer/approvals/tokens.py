"""Approver credentials: random tokens kept only as hashes, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac
import secrets


def new_token() -> str:
    """A fresh approver token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """What the store keeps of a token: its SHA-256, hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def hashes_match(presented: str, stored: str) -> bool:
    """Constant-time comparison of two token hashes."""
    return hmac.compare_digest(presented.encode(), stored.encode())


def mask_email(address: str) -> str:
    """`maria.souza@example.com` -> `m***a@example.com` (what audits and events show)."""
    local, _, domain = address.partition("@")
    shown = local[0] + "***" + (local[-1] if len(local) > 2 else "") if local else "***"
    return f"{shown}@{domain}"
