"""PKCS#11 signing keys selected by certificate SHA-1 thumbprint (needs python-pkcs11)."""

import asyncio
import threading

import pkcs11
from cryptography import x509
from pkcs11 import Attribute, ObjectClass
from pyhanko.keys.internal import translate_pyca_cryptography_cert_to_asn1
from pyhanko.sign.pkcs11 import PKCS11Signer

from .certs import normalize_thumbprint, sha1_thumbprint
from .errors import ErrorCode, SignerCryptoError
from .signer import CachedAttributesMixin, LoadedSigner


class SerializedPKCS11Signer(CachedAttributesMixin, PKCS11Signer):
    """PKCS11Signer that lets one signature at a time reach the token.

    A PKCS#11 session must not run two operations at once (CKR_OPERATION_ACTIVE); this is
    why the Bulk Signer pins PKCS#11 concurrency to 1. The lock is a thread lock so it also
    holds across event loops (each sync call runs its own loop).
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._token_lock = threading.Lock()

    async def async_sign_raw(self, data: bytes, digest_algorithm: str, dry_run=False) -> bytes:
        """Sign on the token, serialised; dry runs never touch it."""
        if dry_run:
            return await super().async_sign_raw(data, digest_algorithm, dry_run=True)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self._token_lock.acquire)
        try:
            return await super().async_sign_raw(data, digest_algorithm)
        finally:
            self._token_lock.release()


def _certificates(session) -> list[tuple[x509.Certificate, bytes]]:
    found = []
    for obj in session.get_objects({Attribute.CLASS: ObjectClass.CERTIFICATE}):
        try:
            cert = x509.load_der_x509_certificate(obj[Attribute.VALUE])
        except ValueError:
            continue  # not X.509 (attribute certificates, vendor objects)
        found.append((cert, obj[Attribute.ID]))
    return found


def _find_token(lib, thumbprint: str, token_label: str | None):
    # Certificates are public objects: search without logging in, so a wrong token never
    # sees the PIN (and never burns a retry of its PIN counter).
    for slot in lib.get_slots(token_present=True):
        try:
            token = slot.get_token()
            if token_label is not None and token.label != token_label:
                continue
            with token.open() as session:
                certs = _certificates(session)
        except pkcs11.PKCS11Error:
            continue  # uninitialised or unreadable token in another slot
        for cert, cert_id in certs:
            if sha1_thumbprint(cert) == thumbprint:
                return token, cert, cert_id, [c for c, _ in certs if c != cert]
    return None


def _login(token, pin: str):
    try:
        return token.open(user_pin=pin)
    except pkcs11.UserAlreadyLoggedIn:
        # Login state belongs to the process, not the session: another signer on this token
        # already logged in, and a new session shares that login.
        return token.open()


def load_pkcs11_signer(
    module_path: str, thumbprint: str, pin: str, *, token_label: str | None = None
) -> LoadedSigner:
    """Open a logged-in session on the token holding the certificate with `thumbprint`.

    The session stays open for the signer's life; call `LoadedSigner.close()` on shutdown.
    """
    want = normalize_thumbprint(thumbprint)
    try:
        lib = pkcs11.lib(module_path)
        found = _find_token(lib, want, token_label)
    except pkcs11.PKCS11Error as exc:
        raise SignerCryptoError(ErrorCode.TOKEN_UNAVAILABLE, f"PKCS#11 module: {exc!r}") from exc
    if found is None:
        raise SignerCryptoError(
            ErrorCode.CERTIFICATE_NOT_FOUND, f"no certificate with SHA-1 thumbprint {want}"
        )
    token, cert, cert_id, others = found
    try:
        session = _login(token, pin)
    except (pkcs11.PinIncorrect, pkcs11.PinLenRange, pkcs11.PinLocked) as exc:
        raise SignerCryptoError(
            ErrorCode.CERTIFICATE_LOAD_FAILED, f"token refused the PIN: {type(exc).__name__}"
        ) from exc
    except pkcs11.PKCS11Error as exc:
        raise SignerCryptoError(ErrorCode.TOKEN_UNAVAILABLE, f"cannot log in: {exc!r}") from exc
    cms_signer = SerializedPKCS11Signer(
        pkcs11_session=session,
        cert_id=cert_id,
        key_id=cert_id,
        signing_cert=translate_pyca_cryptography_cert_to_asn1(cert),
        ca_chain=[translate_pyca_cryptography_cert_to_asn1(c) for c in others],
        other_certs_to_pull=(),
    )
    try:
        cms_signer._load_objects()  # find the key now, so a missing key fails at boot
    except pkcs11.PKCS11Error as exc:
        session.close()
        raise SignerCryptoError(
            ErrorCode.CERTIFICATE_NOT_FOUND, f"no private key with the certificate's id: {exc!r}"
        ) from exc
    return LoadedSigner(
        cms_signer=cms_signer, certificate=cert, chain=tuple(others), close=session.close
    )
