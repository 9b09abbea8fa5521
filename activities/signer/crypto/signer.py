"""A signing identity loaded once (PFX) and reused for every document."""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from asn1crypto import tsp
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.asymmetric.padding import PKCS1v15
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes
from cryptography.hazmat.primitives.serialization import pkcs12
from pyhanko.keys.internal import (
    translate_pyca_cryptography_cert_to_asn1,
    translate_pyca_cryptography_key_to_asn1,
)
from pyhanko.sign.attributes import CMSAttributeProvider, SigningCertificateV2Provider
from pyhanko.sign.general import as_signing_certificate_v2
from pyhanko.sign.signers import Signer, SimpleSigner
from pyhanko_certvalidator.registry import SimpleCertificateStore
from pyhanko_certvalidator.util import get_pyca_cryptography_hash, process_pss_params

from .certs import sha1_thumbprint
from .errors import ErrorCode, SignerCryptoError


class _FixedAttributeProvider(CMSAttributeProvider):
    """Provides a precomputed signed-attribute value."""

    def __init__(self, attribute_type: str, value) -> None:
        self.attribute_type = attribute_type
        self._value = value

    async def build_attr_value(self, dry_run: bool = False):
        return self._value


class CachedAttributesMixin:
    """Reuses the signing-certificate-v2 attribute across signatures of a pyHanko Signer.

    Stock pyHanko rebuilds it per signature, and asn1crypto re-encodes the freshly built
    issuer name several times over (~9 ms per signature); a parsed copy dumps in ~0.1 ms.
    """

    _scv2_provider: _FixedAttributeProvider | None = None

    def _signed_attr_providers(self, *args, **kwargs):
        # Internal pyHanko hook (stable through 0.38): swap in the precomputed attribute.
        if self._scv2_provider is None:
            scv2 = as_signing_certificate_v2(self.signing_cert)
            self._scv2_provider = _FixedAttributeProvider(
                "signing_certificate_v2", tsp.SigningCertificateV2.load(scv2.dump())
            )
        return [
            self._scv2_provider if isinstance(prov, SigningCertificateV2Provider) else prov
            for prov in super()._signed_attr_providers(*args, **kwargs)
        ]


class CachedKeySigner(CachedAttributesMixin, SimpleSigner):
    """pyHanko SimpleSigner that keeps the deserialised key between signatures.

    Stock `SimpleSigner.sign_raw` re-parses the DER key on every signature, and OpenSSL 3
    re-validates RSA keys on load (~38 ms for RSA-2048, pyca/cryptography#7236).
    """

    def __init__(self, *, private_key: PrivateKeyTypes, **kwargs) -> None:
        super().__init__(**kwargs)
        self._private_key = private_key

    def sign_raw(self, data: bytes, digest_algorithm: str) -> bytes:
        """Sign `data` with the cached key."""
        mechanism = self.get_signature_mechanism_for_digest(digest_algorithm)
        algo = mechanism.signature_algo
        key = self._private_key
        if algo == "rsassa_pkcs1v15" and isinstance(key, rsa.RSAPrivateKey):
            return key.sign(data, PKCS1v15(), get_pyca_cryptography_hash(digest_algorithm))
        if algo == "rsassa_pss" and isinstance(key, rsa.RSAPrivateKey):
            padding, hash_algo = process_pss_params(mechanism["parameters"])
            return key.sign(data, padding, hash_algo)
        if algo == "ecdsa" and isinstance(key, ec.EllipticCurvePrivateKey):
            return key.sign(data, ec.ECDSA(get_pyca_cryptography_hash(digest_algorithm)))
        # Rare mechanisms (EdDSA, ML-DSA, DSA) take pyHanko's own path; speed is not an issue there.
        return super().sign_raw(data, digest_algorithm)


@dataclass(frozen=True)
class LoadedSigner:
    """Everything the format modules need to sign: a pyHanko signer plus the raw key and chain."""

    cms_signer: Signer
    certificate: x509.Certificate
    chain: tuple[x509.Certificate, ...] = ()
    # None when the key lives on a token; XAdES (signxml) needs a key object.
    private_key: PrivateKeyTypes | None = None
    close: Callable[[], None] = field(default=lambda: None, compare=False)

    @property
    def thumbprint(self) -> str:
        """SHA-1 thumbprint of the signing certificate."""
        return sha1_thumbprint(self.certificate)

    @property
    def subject(self) -> str:
        """The signing certificate's subject, RFC 4514."""
        return self.certificate.subject.rfc4514_string()


def load_pfx_signer(
    pfx: bytes | Path,
    password: str | bytes | None,
    *,
    extra_certs: Iterable[x509.Certificate] = (),
) -> LoadedSigner:
    """Open a PKCS#12 once and return a signer that keeps the key in memory."""
    data = pfx.read_bytes() if isinstance(pfx, Path) else pfx
    pw = password.encode() if isinstance(password, str) else password
    try:
        key, cert, others = pkcs12.load_key_and_certificates(data, pw)
    except ValueError as exc:
        raise SignerCryptoError(
            ErrorCode.CERTIFICATE_LOAD_FAILED, "cannot open PFX: wrong password or corrupt file"
        ) from exc
    if key is None or cert is None:
        raise SignerCryptoError(
            ErrorCode.CERTIFICATE_LOAD_FAILED, "PFX holds no private key with its certificate"
        )
    chain = tuple(others) + tuple(extra_certs)
    registry = SimpleCertificateStore()
    registry.register_multiple([translate_pyca_cryptography_cert_to_asn1(c) for c in chain])
    cms_signer = CachedKeySigner(
        private_key=key,
        signing_cert=translate_pyca_cryptography_cert_to_asn1(cert),
        signing_key=translate_pyca_cryptography_key_to_asn1(key),
        cert_registry=registry,
    )
    return LoadedSigner(cms_signer=cms_signer, certificate=cert, chain=chain, private_key=key)
