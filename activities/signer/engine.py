"""CPU-bound signing, verification and encryption, run in worker processes with cached keys."""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from cryptography import x509

from activities.signer.contracts.jobs import SignatureFormat, SignerErrorCode
from activities.signer.crypto.errors import ErrorCode as CryptoCode
from activities.signer.crypto.errors import SignerCryptoError
from activities.signer.crypto.policy import SignaturePolicy
from activities.signer.crypto.signer import LoadedSigner
from activities.signer.crypto.timestamps import TsaEndpoint

if TYPE_CHECKING:
    from activities.signer.crypto.csc import CscSpec


@dataclass(frozen=True)
class CertificateSpec:
    """How to open a profile's key; `cache_key` changes whenever the profile does."""

    cache_key: str
    source: str
    secret: str | None
    pfx_path: str | None = None
    pkcs11_module: str | None = None
    pkcs11_token_label: str | None = None
    pkcs11_thumbprint: str | None = None
    # Signing:Pkcs11Modules of the process that built the spec: a module outside it is never
    # loaded, whatever a profile row says.
    allowed_pkcs11_modules: frozenset[str] = frozenset()
    # Signing:KeyDirectories of the process that built the spec (None: it set none): a PFX
    # outside them is never opened, so a failure can't tell what the filesystem holds there.
    key_directories: tuple[str, ...] | None = None
    # cert_source csc: the remote credential and its (resolved) secrets.
    csc: CscSpec | None = field(default=None, repr=False)


@dataclass(frozen=True)
class SignRequest:
    """Sign one staged file into an artifact next to it."""

    certificate: CertificateSpec
    fmt: SignatureFormat
    staged: str
    artifact: str
    policy: dict | None = None
    # Above B-B: the profile's TSAs in order, the timestamps' digest, the trust roots that end
    # the chains whose revocation status is collected, and how long a responder may take.
    level: str = "B-B"
    tsa: tuple[TsaEndpoint, ...] = ()
    tsa_hash_algorithm: str = "sha256"
    trust_roots: tuple[str, ...] = ()
    revocation_timeout: float = 10.0


@dataclass(frozen=True)
class RenewRequest:
    """Add a fresh document timestamp to an archived B-LTA file, into `target`."""

    source: str
    target: str
    tsa: tuple[TsaEndpoint, ...]
    tsa_hash_algorithm: str = "sha256"
    trust_roots: tuple[str, ...] = ()
    revocation_timeout: float = 10.0


@dataclass(frozen=True)
class VerifyRequest:
    """Verify an artifact (and, for CAdES, against its content), then optionally encrypt it."""

    fmt: SignatureFormat
    staged: str
    artifact: str
    trust_roots: tuple[str, ...] = ()
    validate_chain: bool = True
    skip: bool = False
    policy: dict | None = None
    encryption_key: bytes | None = field(default=None, repr=False)


@dataclass(frozen=True)
class EngineOutcome:
    """What a step in the engine did: ok, or a stable code and a message."""

    ok: bool
    code: str | None = None
    message: str = ""
    # B-LTA: when the certificate of the last document timestamp's TSA expires (ISO 8601).
    archive_expiry: str | None = None


# Per worker process: the key stays loaded across documents (reloading it per document is one
# of pyHanko's measured speed traps).
_SIGNERS: dict[str, LoadedSigner] = {}
_RESERVED: dict[str, int] = {}
# Set once by a worker's main() from its configuration; empty elsewhere, so a process that
# never configured modules (the API) loads none.
_ALLOWED_PKCS11_MODULES: frozenset[str] = frozenset()
_KEY_DIRECTORIES: tuple[str, ...] | None = None


def allow_pkcs11_modules(modules: list[str] | tuple[str, ...]) -> None:
    """This process may load these PKCS#11 modules (Signing:Pkcs11Modules) and no other."""
    global _ALLOWED_PKCS11_MODULES
    _ALLOWED_PKCS11_MODULES = frozenset(modules)


def allowed_pkcs11_modules() -> frozenset[str]:
    """The PKCS#11 modules this process may load."""
    return _ALLOWED_PKCS11_MODULES


def allow_key_directories(directories: tuple[str, ...]) -> None:
    """This process opens key files in these directories (Signing:KeyDirectories) only."""
    global _KEY_DIRECTORIES
    _KEY_DIRECTORIES = tuple(os.path.abspath(d) for d in directories)


def key_directories() -> tuple[str, ...] | None:
    """The directories this process opens key files in (None: it was never told)."""
    return _KEY_DIRECTORIES


def inside_directories(path: str, directories: tuple[str, ...]) -> bool:
    """Whether `path` is under one of `directories`, decided on the text alone (`..` can't
    climb out; the filesystem is never asked, so the answer reveals nothing about it)."""
    target = os.path.abspath(path)
    return any(os.path.commonpath([target, os.path.abspath(d)]) == os.path.abspath(d)
               for d in directories)


def warm(certificates: tuple[CertificateSpec, ...] = ()) -> None:
    """Import the signing stack and open these keys in this process; never raises."""
    try:
        from activities.signer.crypto import bsenc, cades, pades, verify, xades  # noqa: F401
    except Exception:  # the first job reports what can't be imported
        return
    for spec in certificates:
        try:
            _signer(spec)
        except Exception:  # the first job with this profile reports it
            continue


def sign(request: SignRequest) -> EngineOutcome:
    """Produce the signed artifact; never raises for a bad document, returns a code."""
    from activities.signer import engine_levels as levels
    from activities.signer.crypto.cades import sign_cades
    from activities.signer.crypto.levels import SignatureLevel, unsupported
    from activities.signer.crypto.xades import sign_xades

    level = SignatureLevel(request.level)
    if (why := unsupported(request.fmt, level)) is not None:
        # Never a silent downgrade: a level the format can't reach fails the job.
        return EngineOutcome(False, SignerErrorCode.SIGNING_FAILED, why)
    try:
        signer = _signer(request.certificate)
    except SignerCryptoError as exc:
        code = (str(exc.code) if exc.code in _REMOTE_CODES
                else SignerErrorCode.PROFILE_DEGRADED)
        return EngineOutcome(False, code,
                             f"The profile's certificate could not be opened: {exc.message}")
    detail = ""
    archive_expiry = None
    try:
        policy = _policy(request.policy)
        content = Path(request.staged).read_bytes()
        stamper = levels.stamper(request.tsa) if level.timestamped else None
        if request.fmt is SignatureFormat.PADES:
            signed, detail, archive_expiry = levels.sign_pdf(levels.LevelRequest(
                level, request.tsa, request.tsa_hash_algorithm, request.trust_roots,
                request.revocation_timeout,
                f"{request.certificate.cache_key}:{request.policy}:{request.tsa}"),
                signer, policy, content, _RESERVED)
        elif request.fmt is SignatureFormat.XADES:
            signed = sign_xades(content, signer, policy=policy)
        else:
            signed = sign_cades(content, signer, policy=policy, timestamper=stamper,
                                md_algorithm=levels.md(request.tsa_hash_algorithm, level))
            if stamper is not None:
                detail = f"{level.value}: timestamp from {stamper.answered_by}"
    except SignerCryptoError as exc:
        return EngineOutcome(False, str(exc.code), exc.message)
    except OSError as exc:
        return EngineOutcome(False, SignerErrorCode.INPUT_UNREADABLE, f"staged copy: {exc}")
    write_atomically(Path(request.artifact), signed)
    return EngineOutcome(True, message=detail, archive_expiry=archive_expiry)


_REMOTE_CODES = frozenset({CryptoCode.REMOTE_SIGNER_REFUSED, CryptoCode.REMOTE_SIGNER_UNAVAILABLE})


def renew(request: RenewRequest) -> EngineOutcome:
    """Write `source` plus a fresh document timestamp to `target` (archival renewal)."""
    from activities.signer import engine_levels as levels
    from activities.signer.crypto._sync import run_sync
    from activities.signer.crypto.levels import SignatureLevel
    from activities.signer.crypto.ltv import LevelOptions, async_renew_archive

    options = LevelOptions(SignatureLevel.B_LTA, levels.stamper(request.tsa),
                           levels.anchors(request.trust_roots), request.revocation_timeout,
                           request.tsa_hash_algorithm)
    try:
        result = run_sync(async_renew_archive(Path(request.source).read_bytes(), options))
    except SignerCryptoError as exc:
        return EngineOutcome(False, str(exc.code), exc.message)
    except OSError as exc:
        return EngineOutcome(False, SignerErrorCode.INPUT_UNREADABLE, f"archive: {exc}")
    write_atomically(Path(request.target), result.data)
    expiry = result.archive_expiry.isoformat() if result.archive_expiry else None
    return EngineOutcome(True, message=result.detail, archive_expiry=expiry)


def verify_and_seal(request: VerifyRequest) -> EngineOutcome:
    """Verify the artifact unless told to skip, then encrypt it in place when asked."""
    from activities.signer.crypto.bsenc import BsencCipher

    artifact = Path(request.artifact)
    signed = artifact.read_bytes()
    if not request.skip:
        verdict = _verify(request, signed)
        if not verdict.ok:
            return verdict
    if request.encryption_key is not None:
        write_atomically(artifact, bytes(BsencCipher(request.encryption_key).encrypt(signed)))
    return EngineOutcome(True)


def _verify(request: VerifyRequest, signed: bytes) -> EngineOutcome:
    from activities.signer.crypto.verify import verify_cades, verify_pades, verify_xades

    roots = [x509.load_pem_x509_certificate(Path(p).read_bytes()) for p in request.trust_roots]
    options = {"trust_roots": roots, "validate_chain": request.validate_chain,
               "expected_policy": _policy(request.policy)}
    if request.fmt is SignatureFormat.PADES:
        result = verify_pades(signed, **options)
    elif request.fmt is SignatureFormat.XADES:
        result = verify_xades(signed, **options)
    else:
        result = verify_cades(signed, Path(request.staged).read_bytes(), **options)
    if result.ok:
        return EngineOutcome(True, message=result.reason)
    return EngineOutcome(False, str(result.code or CryptoCode.SIGNATURE_INVALID),
                         f"Verification failed: {result.reason}")


def _signer(spec: CertificateSpec) -> LoadedSigner:
    signer = _SIGNERS.get(spec.cache_key)
    if signer is None:
        signer = open_certificate(spec)
        _SIGNERS[spec.cache_key] = signer
    return signer


def open_certificate(spec: CertificateSpec) -> LoadedSigner:
    """Open the key a profile names (PFX file or PKCS#11 token)."""
    from activities.signer.crypto.errors import ErrorCode
    from activities.signer.crypto.signer import load_pfx_signer

    if spec.source == "csc":
        from activities.signer.crypto.csc import load_csc_signer

        if spec.csc is None:
            raise SignerCryptoError(ErrorCode.CERTIFICATE_LOAD_FAILED,
                                    "cert_source csc needs a csc block")
        return load_csc_signer(spec.csc)
    if spec.source == "pkcs11":
        from activities.signer.crypto.pkcs11_token import load_pkcs11_signer

        if not (spec.pkcs11_module and spec.pkcs11_thumbprint and spec.secret):
            raise SignerCryptoError(ErrorCode.CERTIFICATE_LOAD_FAILED,
                                    "PKCS#11 needs a module, a thumbprint and a PIN variable")
        if spec.pkcs11_module not in spec.allowed_pkcs11_modules:
            raise SignerCryptoError(ErrorCode.CERTIFICATE_LOAD_FAILED,
                                    f"PKCS#11 module {spec.pkcs11_module} is not in "
                                    "Signing:Pkcs11Modules of this process")
        return load_pkcs11_signer(spec.pkcs11_module, spec.pkcs11_thumbprint, spec.secret,
                                  token_label=spec.pkcs11_token_label)
    if not spec.pfx_path:
        raise SignerCryptoError(ErrorCode.CERTIFICATE_LOAD_FAILED, "no PFX path configured")
    if spec.key_directories is not None \
            and not inside_directories(spec.pfx_path, spec.key_directories):
        raise SignerCryptoError(ErrorCode.CERTIFICATE_LOAD_FAILED,
                                "the PFX path is outside Signing:KeyDirectories of this process")
    try:
        data = Path(spec.pfx_path).read_bytes()
    except OSError as exc:
        raise SignerCryptoError(ErrorCode.CERTIFICATE_LOAD_FAILED,
                                f"cannot read PFX {spec.pfx_path}: {exc.strerror}") from None
    return load_pfx_signer(data, spec.secret)


def _policy(raw: dict | None) -> SignaturePolicy | None:
    if not raw:
        return None
    return SignaturePolicy(oid=raw["oid"], hash_value=base64.b64decode(raw["hash_base64"]),
                           hash_algorithm=raw.get("hash_algorithm", "sha256"),
                           uri=raw.get("uri"))


def write_atomically(path: Path, data: bytes) -> None:
    """Write beside `path`, then rename over it: a reader never sees half a file."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    temporary.replace(path)
