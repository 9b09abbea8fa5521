"""BSENC v1 encryption: layout, round trips, tamper and wrong-key detection, salt files."""

import hashlib

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from activities.signer.crypto import bsenc
from activities.signer.crypto.errors import ErrorCode, SignerCryptoError

SALT = bytes(range(32))
# Tests derive with the minimum count; one test pins the production default.
FAST = bsenc.MIN_PBKDF2_ITERATIONS


@pytest.fixture(scope="module")
def cipher() -> bsenc.BsencCipher:
    return bsenc.BsencCipher.from_passphrase("correct horse", SALT, iterations=FAST)


def reference_decrypt(blob: bytes, passphrase: str, salt: bytes, iterations: int) -> bytes:
    """The published BSENC v1 recipe, written straight from the layout with AESGCM."""
    key = hashlib.pbkdf2_hmac("sha256", passphrase.encode(), salt, iterations, 32)
    assert blob[:8] == b"BSENC\0\0\0" and blob[8] == 1
    return AESGCM(key).decrypt(blob[9:21], blob[21:], None)


def test_layout_matches_bulk_signer_reference(cipher):
    blob = cipher.encrypt(b"signed pdf bytes")
    assert blob[:9] == b"BSENC\0\0\0\x01"
    assert len(blob) == 8 + 1 + 12 + len(b"signed pdf bytes") + 16
    assert reference_decrypt(bytes(blob), "correct horse", SALT, FAST) == b"signed pdf bytes"


@pytest.mark.parametrize("size", [0, 1, 15, 16, 17, 1 << 20])
def test_roundtrip(cipher, size):
    data = bytes(i % 251 for i in range(size))
    assert cipher.decrypt(bytes(cipher.encrypt(data))) == data


def test_nonce_is_fresh_per_blob(cipher):
    a, b = cipher.encrypt(b"same"), cipher.encrypt(b"same")
    assert a[9:21] != b[9:21] and a != b


@pytest.mark.parametrize(
    "offset", [9, 20, 21, -17, -1], ids=["nonce0", "nonce11", "ct0", "ctN", "tag"]
)
def test_any_flipped_byte_is_detected(cipher, offset):
    blob = bytearray(cipher.encrypt(b"payload that must not change"))
    blob[offset] ^= 0x01
    with pytest.raises(SignerCryptoError) as err:
        cipher.decrypt(bytes(blob))
    assert err.value.code is ErrorCode.ENCRYPTION_AUTH_FAILED


def test_wrong_passphrase_or_salt_is_detected(cipher):
    blob = bytes(cipher.encrypt(b"payload"))
    for wrong in (
        bsenc.BsencCipher.from_passphrase("wrong horse", SALT, iterations=FAST),
        bsenc.BsencCipher.from_passphrase("correct horse", SALT[::-1], iterations=FAST),
    ):
        with pytest.raises(SignerCryptoError, match="wrong passphrase") as err:
            wrong.decrypt(blob)
        assert err.value.code is ErrorCode.ENCRYPTION_AUTH_FAILED


@pytest.mark.parametrize(
    ("blob", "code"),
    [
        (b"%PDF-1.7 plain file", ErrorCode.ENCRYPTION_NOT_BSENC),
        (b"", ErrorCode.ENCRYPTION_NOT_BSENC),
        (b"BSENC\0\0\0\x02" + bytes(40), ErrorCode.ENCRYPTION_UNSUPPORTED_VERSION),
        (b"BSENC\0\0\0\x01" + bytes(20), ErrorCode.ENCRYPTION_TRUNCATED),
    ],
    ids=["plain", "empty", "v2", "truncated"],
)
def test_non_bsenc_input_has_stable_code(cipher, blob, code):
    with pytest.raises(SignerCryptoError) as err:
        cipher.decrypt(blob)
    assert err.value.code is code


def test_default_kdf_is_pbkdf2_sha256_600k():
    assert bsenc.PBKDF2_ITERATIONS == 600_000
    expected = hashlib.pbkdf2_hmac("sha256", b"pw", SALT, 600_000, 32)
    assert bsenc.derive_key("pw", SALT) == expected


def test_short_salt_and_low_iterations_are_refused():
    with pytest.raises(SignerCryptoError) as err:
        bsenc.derive_key("pw", b"short", FAST)
    assert err.value.code is ErrorCode.ENCRYPTION_BAD_SALT
    with pytest.raises(ValueError):
        bsenc.derive_key("pw", SALT, 1_000)


def test_salt_file_roundtrip_and_no_overwrite(tmp_path):
    path = tmp_path / "bsenc.salt"
    salt = bsenc.write_salt_file(path)
    assert len(salt) == bsenc.SALT_SIZE and bsenc.read_salt_file(path) == salt
    assert path.stat().st_mode & 0o077 == 0
    with pytest.raises(FileExistsError):
        bsenc.write_salt_file(path)
    (tmp_path / "bad.salt").write_bytes(b"tiny")
    with pytest.raises(SignerCryptoError) as err:
        bsenc.read_salt_file(tmp_path / "bad.salt")
    assert err.value.code is ErrorCode.ENCRYPTION_BAD_SALT


def test_file_streaming_matches_in_memory_format(cipher, tmp_path):
    data = bytes(range(256)) * 9000  # ~2.3 MB, several chunks
    src, enc, dec = tmp_path / "a.pdf", tmp_path / "a.pdf.enc", tmp_path / "a.out"
    src.write_bytes(data)
    cipher.encrypt_file(src, enc)
    assert cipher.decrypt(enc.read_bytes()) == data
    cipher.decrypt_file(enc, dec)
    assert dec.read_bytes() == data


def test_tampered_file_leaves_no_plaintext(cipher, tmp_path):
    enc, dec = tmp_path / "a.enc", tmp_path / "a.out"
    blob = bytearray(cipher.encrypt(b"x" * 5000))
    blob[100] ^= 0xFF
    enc.write_bytes(blob)
    with pytest.raises(SignerCryptoError) as err:
        cipher.decrypt_file(enc, dec)
    assert err.value.code is ErrorCode.ENCRYPTION_AUTH_FAILED
    assert list(tmp_path.iterdir()) == [enc]
