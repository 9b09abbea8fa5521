"""Operator password hashes: scrypt from hashlib, compared in constant time.

Run `python -m services.dashboard.passwords` to hash a password for `dashboard.operators`.
"""

from __future__ import annotations

import base64
import getpass
import hashlib
import hmac
import secrets

# OWASP's scrypt floor (N=2^17, r=8, p=1) costs ~128 MiB; N=2^14 keeps a login ~50 ms.
_N, _R, _P = 2**14, 8, 1
_MAXMEM = 64 * 1024 * 1024


def hash_password(password: str, *, salt: bytes | None = None) -> str:
    """`scrypt$N$r$p$salt$hash`, both base64."""
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=_N, r=_R, p=_P, maxmem=_MAXMEM)
    return "$".join(["scrypt", str(_N), str(_R), str(_P), _b64(salt), _b64(digest)])


def verify_password(password: str, encoded: str) -> bool:
    """True when `password` matches `encoded`; a malformed hash never matches."""
    try:
        scheme, n, r, p, salt, expected = encoded.split("$")
        if scheme != "scrypt":
            return False
        wanted = _unb64(expected)
        digest = hashlib.scrypt(password.encode(), salt=_unb64(salt), n=int(n), r=int(r),
                                p=int(p), maxmem=_MAXMEM)
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(digest, wanted)


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def _unb64(text: str) -> bytes:
    return base64.b64decode(text.encode(), validate=True)


if __name__ == "__main__":
    print(hash_password(getpass.getpass("Operator password: ")))
