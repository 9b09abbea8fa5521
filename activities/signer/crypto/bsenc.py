"""BSENC v1 artifact encryption: AES-256-GCM under a PBKDF2-HMAC-SHA256 key.

Blob layout (the Bulk Signer's, so its `decrypt-bsenc.py` reads our output):
``b"BSENC\\0\\0\\0"`` | version ``0x01`` | 12-byte random nonce | ciphertext | 16-byte GCM tag,
with no associated data. The salt is not in the blob; it lives in a salt file next to the
configuration, and the passphrase in a secret.
"""

import hashlib
import os
import secrets
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from .errors import ErrorCode, SignerCryptoError

MAGIC = b"BSENC\0\0\0"
VERSION = 1
NONCE_SIZE = 12
TAG_SIZE = 16
HEADER_SIZE = len(MAGIC) + 1 + NONCE_SIZE
KEY_SIZE = 32
PBKDF2_ITERATIONS = 600_000
MIN_PBKDF2_ITERATIONS = 10_000
# Salt file format: the raw salt bytes and nothing else; 32 when generated here, 16–64 accepted.
SALT_SIZE = 32
MIN_SALT_SIZE = 16
MAX_SALT_SIZE = 64
FILE_CHUNK_SIZE = 1 << 20


def derive_key(passphrase: str | bytes, salt: bytes, iterations: int = PBKDF2_ITERATIONS) -> bytes:
    """PBKDF2-HMAC-SHA256 → 32-byte key (~140 ms at 600 000 iterations: derive once)."""
    if not MIN_SALT_SIZE <= len(salt) <= MAX_SALT_SIZE:
        raise SignerCryptoError(
            ErrorCode.ENCRYPTION_BAD_SALT,
            f"salt must be {MIN_SALT_SIZE}–{MAX_SALT_SIZE} bytes, got {len(salt)}",
        )
    if iterations < MIN_PBKDF2_ITERATIONS:
        raise ValueError(f"PBKDF2 iterations below {MIN_PBKDF2_ITERATIONS}")
    if not passphrase:
        raise ValueError("empty BSENC passphrase")
    pw = passphrase.encode() if isinstance(passphrase, str) else passphrase
    return hashlib.pbkdf2_hmac("sha256", pw, salt, iterations, dklen=KEY_SIZE)


def new_salt() -> bytes:
    """A fresh random salt of `SALT_SIZE` bytes."""
    return secrets.token_bytes(SALT_SIZE)


def write_salt_file(path: Path) -> bytes:
    """Create a salt file (owner-only); refuse to overwrite, since that orphans every artifact."""
    salt = new_salt()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(salt)
    return salt


def read_salt_file(path: Path) -> bytes:
    """Read and check a salt file."""
    salt = path.read_bytes()
    if not MIN_SALT_SIZE <= len(salt) <= MAX_SALT_SIZE:
        raise SignerCryptoError(
            ErrorCode.ENCRYPTION_BAD_SALT,
            f"salt file {path.name} holds {len(salt)} bytes, "
            f"expected {MIN_SALT_SIZE}–{MAX_SALT_SIZE}",
        )
    return salt


def is_bsenc(prefix: bytes) -> bool:
    """Whether data starts like a BSENC blob (any version)."""
    return prefix[: len(MAGIC)] == MAGIC


def _check_header(header: bytes, total_size: int) -> bytes:
    """Validate magic, version and size; return the nonce."""
    if not is_bsenc(header):
        raise SignerCryptoError(ErrorCode.ENCRYPTION_NOT_BSENC, "not a BSENC file (bad magic)")
    if len(header) > len(MAGIC) and header[len(MAGIC)] != VERSION:
        raise SignerCryptoError(
            ErrorCode.ENCRYPTION_UNSUPPORTED_VERSION,
            f"BSENC version {header[len(MAGIC)]} is not supported (only {VERSION})",
        )
    if total_size < HEADER_SIZE + TAG_SIZE:
        raise SignerCryptoError(ErrorCode.ENCRYPTION_TRUNCATED, "BSENC blob is truncated")
    return bytes(header[len(MAGIC) + 1 : HEADER_SIZE])


_AUTH_FAILED = "BSENC authentication failed: wrong passphrase/salt or the file was altered"


class BsencCipher:
    """Encrypts and decrypts BSENC v1 blobs with one derived key."""

    def __init__(self, key: bytes) -> None:
        if len(key) != KEY_SIZE:
            raise ValueError(f"BSENC key must be {KEY_SIZE} bytes")
        self._key = key

    @classmethod
    def from_passphrase(
        cls, passphrase: str | bytes, salt: bytes, *, iterations: int = PBKDF2_ITERATIONS
    ) -> "BsencCipher":
        """Derive the key once; reuse the cipher for every artifact."""
        return cls(derive_key(passphrase, salt, iterations))

    def _cipher(self, nonce: bytes, tag: bytes | None = None) -> Cipher:
        return Cipher(algorithms.AES(self._key), modes.GCM(nonce, tag))

    def encrypt(self, data: bytes) -> bytearray:
        """Encrypt into one buffer: peak memory is input + output, no third copy."""
        nonce = secrets.token_bytes(NONCE_SIZE)
        out = bytearray(HEADER_SIZE + len(data) + TAG_SIZE)
        out[:HEADER_SIZE] = MAGIC + bytes([VERSION]) + nonce
        enc = self._cipher(nonce).encryptor()
        body = memoryview(out)[HEADER_SIZE : HEADER_SIZE + len(data)]
        written = enc.update_into(data, body)
        enc.finalize()
        assert written == len(data)
        out[HEADER_SIZE + len(data) :] = enc.tag
        return out

    def decrypt(self, blob: bytes) -> bytearray:
        """Decrypt and authenticate; raise on a wrong key, tampering or a non-BSENC input."""
        nonce = _check_header(blob[:HEADER_SIZE], len(blob))
        view = memoryview(blob)
        size = len(blob) - HEADER_SIZE - TAG_SIZE
        dec = self._cipher(nonce, bytes(view[-TAG_SIZE:])).decryptor()
        out = bytearray(size)
        dec.update_into(view[HEADER_SIZE : HEADER_SIZE + size], out)
        try:
            dec.finalize()
        except InvalidTag as exc:
            raise SignerCryptoError(ErrorCode.ENCRYPTION_AUTH_FAILED, _AUTH_FAILED) from exc
        return out

    def encrypt_file(self, src: Path, dst: Path) -> None:
        """Stream-encrypt `src` into `dst` in 1 MiB chunks (constant memory)."""
        nonce = secrets.token_bytes(NONCE_SIZE)
        enc = self._cipher(nonce).encryptor()
        with src.open("rb") as fin, _AtomicWriter(dst) as fout:
            fout.write(MAGIC + bytes([VERSION]) + nonce)
            while chunk := fin.read(FILE_CHUNK_SIZE):
                fout.write(enc.update(chunk))
            fout.write(enc.finalize())
            fout.write(enc.tag)

    def decrypt_file(self, src: Path, dst: Path) -> None:
        """Stream-decrypt `src` into `dst`; `dst` appears only if the tag verifies."""
        total = src.stat().st_size
        with src.open("rb") as fin:
            nonce = _check_header(fin.read(HEADER_SIZE), total)
            fin.seek(total - TAG_SIZE)
            tag = fin.read(TAG_SIZE)
            fin.seek(HEADER_SIZE)
            dec = self._cipher(nonce, tag).decryptor()
            remaining = total - HEADER_SIZE - TAG_SIZE
            # GCM releases plaintext before the tag is checked: write to a temp file and
            # publish it only after finalize() succeeds.
            with _AtomicWriter(dst) as fout:
                while remaining:
                    chunk = fin.read(min(FILE_CHUNK_SIZE, remaining))
                    remaining -= len(chunk)
                    fout.write(dec.update(chunk))
                try:
                    fout.write(dec.finalize())
                except InvalidTag as exc:
                    raise SignerCryptoError(ErrorCode.ENCRYPTION_AUTH_FAILED, _AUTH_FAILED) from exc


class _AtomicWriter:
    """Writes to `<dst>.partial` and renames onto `dst` only when the block exits cleanly."""

    def __init__(self, dst: Path) -> None:
        self._dst = dst
        self._tmp = dst.with_name(dst.name + ".partial")

    def __enter__(self):
        self._file = self._tmp.open("wb")
        return self._file

    def __exit__(self, exc_type, exc, tb) -> None:
        self._file.close()
        if exc_type is None:
            os.replace(self._tmp, self._dst)
        else:
            self._tmp.unlink(missing_ok=True)
