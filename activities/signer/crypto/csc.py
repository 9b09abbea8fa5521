"""Cloud certificates: a key held by a remote service speaking the Cloud Signature Consortium
API v1 (credentials/info, credentials/authorize, signatures/signHash), signed through pyHanko's
CSCSigner. An OAuth bearer token, or static credentials exchanged at auth/login (HTTP Basic,
CSC API v1.0.4.0 §11.2), authenticates; the PIN and OTP go to credentials/authorize, whose
SAD is pinned to the hashes about to be signed.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import aiohttp
from cryptography import x509
from pyhanko.sign.general import SigningError
from pyhanko.sign.signers.csc_signer import (
    CSCAuthorizationInfo,
    CSCAuthorizationManager,
    CSCCredentialInfo,
    CSCServiceSessionInfo,
    CSCSigner,
    fetch_certs_in_csc_credential,
)

from ._sync import run_sync
from .errors import ErrorCode, SignerCryptoError
from .signer import LoadedSigner
from .timestamps import basic_authorization


@dataclass(frozen=True)
class CscSpec:
    """Where the credential lives and how to reach it; secrets stay out of repr."""

    service_url: str
    credential_id: str
    token: str | None = field(default=None, repr=False)
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    pin: str | None = field(default=None, repr=False)
    otp: str | None = field(default=None, repr=False)
    timeout_seconds: float = 30.0


def remote_failure(exc: BaseException, what: str) -> SignerCryptoError:
    """A refusal (HTTP 4xx) or an outage (timeout, network, 5xx), each with its own code."""
    inner: BaseException | None = exc
    while inner is not None:
        if isinstance(inner, aiohttp.ClientResponseError):
            code = (ErrorCode.REMOTE_SIGNER_REFUSED if 400 <= inner.status < 500
                    else ErrorCode.REMOTE_SIGNER_UNAVAILABLE)
            return SignerCryptoError(code, f"{what}: the signing service answered HTTP "
                                           f"{inner.status}")
        if isinstance(inner, asyncio.TimeoutError | aiohttp.ClientConnectionError | OSError):
            return SignerCryptoError(ErrorCode.REMOTE_SIGNER_UNAVAILABLE,
                                     f"{what}: the signing service did not answer "
                                     f"({type(inner).__name__})")
        inner = inner.__cause__
    return SignerCryptoError(ErrorCode.REMOTE_SIGNER_REFUSED, f"{what}: {exc}")


class _PinAuthorization(CSCAuthorizationManager):
    """credentials/authorize per signature, with the PIN/OTP, pinned to the hashes."""

    def __init__(self, info: CSCServiceSessionInfo, credential: CSCCredentialInfo,
                 spec: CscSpec, session: aiohttp.ClientSession) -> None:
        super().__init__(info, credential)
        self._spec = spec
        self._session = session

    async def authorize_signature(self, hash_b64s: list[str]) -> CSCAuthorizationInfo:
        body = self.format_csc_auth_request(pin=self._spec.pin, otp=self._spec.otp,
                                            hash_b64s=hash_b64s)
        try:
            async with self._session.post(
                    self.csc_session_info.endpoint_url("credentials/authorize"),
                    headers=self.auth_headers, json=body, raise_for_status=True,
                    timeout=aiohttp.ClientTimeout(total=self._spec.timeout_seconds)) as answer:
                data = await answer.json()
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            raise remote_failure(exc, "credentials/authorize") from None
        return self.parse_csc_auth_response(data)


class _RemoteSigner(CSCSigner):
    """pyHanko's CSCSigner whose failures carry the signer's codes."""

    async def async_sign_raw(self, data: bytes, digest_algorithm: str, dry_run: bool = False
                             ) -> bytes:
        try:
            return await super().async_sign_raw(data, digest_algorithm, dry_run=dry_run)
        except SignerCryptoError:
            raise
        except (TimeoutError, SigningError, aiohttp.ClientError, OSError) as exc:
            raise remote_failure(exc, "signatures/signHash") from None


async def _login(session: aiohttp.ClientSession, spec: CscSpec) -> str:
    url = f"{spec.service_url.rstrip('/')}/csc/v1/auth/login"
    try:
        async with session.post(url, json={}, raise_for_status=True,
                                headers={"Authorization": basic_authorization(
                                    spec.username or "", spec.password or "")},
                                timeout=aiohttp.ClientTimeout(total=spec.timeout_seconds)
                                ) as answer:
            token = (await answer.json()).get("access_token")
    except (TimeoutError, aiohttp.ClientError, OSError) as exc:
        raise remote_failure(exc, "auth/login") from None
    if not token:
        raise SignerCryptoError(ErrorCode.REMOTE_SIGNER_REFUSED,
                                "auth/login: the signing service returned no access_token")
    return str(token)


async def async_load_csc_signer(spec: CscSpec) -> LoadedSigner:
    """Ask the service for the credential's certificates; sign through it from then on."""
    session = aiohttp.ClientSession()
    try:
        token = spec.token or (await _login(session, spec) if spec.username else None)
        info = CSCServiceSessionInfo(spec.service_url.rstrip("/"), spec.credential_id,
                                     oauth_token=token)
        try:
            credential = await fetch_certs_in_csc_credential(
                session, info, timeout=max(1, round(spec.timeout_seconds)))
        except (TimeoutError, SigningError, aiohttp.ClientError, OSError) as exc:
            raise remote_failure(exc, "credentials/info") from None
    except BaseException:
        await session.close()
        raise
    signer = _RemoteSigner(session, _PinAuthorization(info, credential, spec, session),
                           sign_timeout=max(1, round(spec.timeout_seconds)))
    certificate = x509.load_der_x509_certificate(credential.signing_cert.dump())
    chain = tuple(x509.load_der_x509_certificate(c.dump()) for c in credential.chain)
    return LoadedSigner(cms_signer=signer, certificate=certificate, chain=chain,
                        close=lambda: run_sync(session.close()))


def load_csc_signer(spec: CscSpec) -> LoadedSigner:
    """Synchronous `async_load_csc_signer` (its session lives on this thread's kept loop)."""
    return run_sync(async_load_csc_signer(spec))
