"""AES-GCM encryption of every Temporal payload, keyed by id so keys can rotate."""

from __future__ import annotations

import base64
import binascii
import os
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from temporalio.api.common.v1 import Payload
from temporalio.converter import PayloadCodec

from shared.private_files import write_private

# The metadata the samples-python `encryption` codec writes, so Temporal tools recognise it.
ENCODING = b"binary/encrypted"
KEY_ID_FIELD = "encryption-key-id"
KEY_BYTES = 32  # AES-256
NONCE_BYTES = 12  # the GCM nonce size NIST SP 800-38D recommends
_KEY_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


class PayloadKeyError(ValueError):
    """The configured payload keys can't be used; the message says which and why."""


class PayloadDecryptError(ValueError):
    """An encrypted payload names a key we don't hold, or fails its authentication tag."""


@dataclass(frozen=True)
class PayloadKeys:
    """Every key that decrypts, by id; the last one configured encrypts."""

    keys: dict[str, bytes]
    current: str

    def secrets(self) -> list[str]:
        """The keys as written in settings (base64), for the log masker."""
        return [base64.b64encode(key).decode() for key in self.keys.values()]


def parse_keys(text: str, *, source: str) -> PayloadKeys:
    """`id:base64key` entries, separated by commas or new lines; the last one encrypts."""
    keys: dict[str, bytes] = {}
    for entry in re.split(r"[,\n]", text):
        entry = entry.strip()
        if not entry or entry.startswith("#"):
            continue
        key_id, sep, encoded = entry.partition(":")
        key_id = key_id.strip()
        if not sep or not _KEY_ID.fullmatch(key_id):
            raise PayloadKeyError(f"{source}: each entry is `id:base64key` with an id of "
                                  "letters, digits, `.`, `_` or `-`")
        try:
            key = base64.b64decode(encoded.strip(), validate=True)
        except binascii.Error:
            raise PayloadKeyError(f"{source}: key {key_id!r} is not base64") from None
        if len(key) != KEY_BYTES:
            raise PayloadKeyError(f"{source}: key {key_id!r} has {len(key)} bytes; AES-256 "
                                  f"needs {KEY_BYTES}")
        if key_id in keys:
            raise PayloadKeyError(f"{source}: key id {key_id!r} appears twice")
        keys[key_id] = key
    if not keys:
        raise PayloadKeyError(f"{source}: no key")
    return PayloadKeys(keys=keys, current=next(reversed(keys)))


def new_key_entry(now: datetime | None = None) -> str:
    """A fresh `id:base64key` line, the id dated so a rotation reads in order."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d%H%M%S")
    return f"k{stamp}:{base64.b64encode(secrets.token_bytes(KEY_BYTES)).decode()}"


def ensure_key_file(path: Path) -> bool:
    """Create `path` (0600) with one fresh key unless it exists; True if this call made it."""
    if path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    draft = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    write_private(draft, (new_key_entry() + "\n").encode())
    try:
        # link() fails if another process made the file first: the first key wins everywhere.
        os.link(draft, path)
    except FileExistsError:
        return False
    finally:
        draft.unlink()
    return True


class EncryptionCodec(PayloadCodec):
    """Encrypts with the current key; decrypts with the key the payload names.

    A payload without the encrypted encoding passes through on decode: histories written
    before encryption was turned on still replay and still show.
    """

    def __init__(self, keys: PayloadKeys) -> None:
        self._keys = keys
        self._ciphers = {key_id: AESGCM(key) for key_id, key in keys.keys.items()}

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        """Each payload serialised whole (metadata too) and sealed with the current key."""
        key_id = self._keys.current
        cipher = self._ciphers[key_id]
        sealed = []
        for payload in payloads:
            nonce = os.urandom(NONCE_BYTES)
            # The key id is authenticated data: a payload relabelled with another id fails.
            data = nonce + cipher.encrypt(nonce, payload.SerializeToString(), key_id.encode())
            sealed.append(Payload(metadata={"encoding": ENCODING,
                                            KEY_ID_FIELD: key_id.encode()}, data=data))
        return sealed

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        """Encrypted payloads opened with their key; any other payload as it is."""
        return [self._open(payload) if payload.metadata.get("encoding") == ENCODING
                else payload for payload in payloads]

    def _open(self, payload: Payload) -> Payload:
        key_id = payload.metadata.get(KEY_ID_FIELD, b"").decode(errors="replace")
        cipher = self._ciphers.get(key_id)
        if cipher is None:
            raise PayloadDecryptError(f"payload encrypted with key {key_id!r}, which is not "
                                      "among the configured payload keys")
        nonce, sealed = payload.data[:NONCE_BYTES], payload.data[NONCE_BYTES:]
        try:
            return Payload.FromString(cipher.decrypt(nonce, sealed, key_id.encode()))
        except InvalidTag:
            raise PayloadDecryptError(
                f"payload encrypted with key {key_id!r} fails authentication") from None
