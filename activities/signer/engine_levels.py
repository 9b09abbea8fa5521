"""The engine's steps above B-B, in the signing processes: PAdES levels, archival renewal."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from pyhanko.keys.internal import translate_pyca_cryptography_cert_to_asn1

from activities.signer.crypto._sync import run_sync
from activities.signer.crypto.levels import SignatureLevel
from activities.signer.crypto.ltv import LevelOptions, async_sign_pades_level, token_size
from activities.signer.crypto.pades import bytes_reserved_for
from activities.signer.crypto.policy import SignaturePolicy
from activities.signer.crypto.signer import LoadedSigner
from activities.signer.crypto.timestamps import FailoverTimeStamper, TsaEndpoint

# Per worker process: each profile's TSAs (their token size is learnt once) and trust roots.
_STAMPERS: dict[tuple[TsaEndpoint, ...], FailoverTimeStamper] = {}
_ANCHORS: dict[tuple[str, ...], tuple] = {}


def md(tsa_hash_algorithm: str, level: SignatureLevel) -> str:
    """The digest of a signature at `level`."""
    # pyHanko timestamps a signature with the signature's own digest (RFC 8933): above B-B the
    # profile's TSA hash algorithm is the signature's too; B-B keeps SHA-256.
    return tsa_hash_algorithm if level.timestamped else "sha256"


@dataclass(frozen=True)
class LevelRequest:
    """What a PAdES signature above B-B needs from the engine's request."""

    level: SignatureLevel
    tsa: tuple[TsaEndpoint, ...]
    tsa_hash_algorithm: str
    trust_roots: tuple[str, ...]
    revocation_timeout: float
    # Changes whenever the profile, its policy or its TSAs do (the reserve's cache key).
    reserve_key: str


def sign_pdf(request: LevelRequest, signer: LoadedSigner, policy: SignaturePolicy | None,
             content: bytes, reserved_cache: dict[str, int]) -> tuple[bytes, str, str | None]:
    """PAdES at the request's level; the signature reserve is computed once per key."""
    level = request.level
    digest = md(request.tsa_hash_algorithm, level)
    tsa = stamper(request.tsa) if level.timestamped else None
    key = f"{request.reserve_key}:{level}:{digest}"
    if key not in reserved_cache:
        reserved = bytes_reserved_for(signer, policy)
        if tsa is not None:
            # Hex characters: two per byte of the token the signature will carry.
            reserved += 2 * run_sync(token_size(tsa, digest))
        reserved_cache[key] = reserved
    options = LevelOptions(level, tsa, anchors(request.trust_roots),
                           request.revocation_timeout, digest)
    result = run_sync(async_sign_pades_level(content, signer, options, policy=policy,
                                             bytes_reserved=reserved_cache[key]))
    expiry = result.archive_expiry.isoformat() if result.archive_expiry else None
    return result.data, result.detail, expiry


def stamper(endpoints: tuple[TsaEndpoint, ...]) -> FailoverTimeStamper:
    """This process's client for these TSAs (it remembers their token size)."""
    cached = _STAMPERS.get(endpoints)
    if cached is None:
        cached = _STAMPERS[endpoints] = FailoverTimeStamper(endpoints)
    return cached


def anchors(paths: tuple[str, ...]) -> tuple:
    """The trust roots (PEM files) as asn1crypto certificates, read once per process."""
    cached = _ANCHORS.get(paths)
    if cached is None:
        cached = _ANCHORS[paths] = tuple(
            translate_pyca_cryptography_cert_to_asn1(x509.load_pem_x509_certificate(
                Path(p).read_bytes())) for p in paths)
    return cached
