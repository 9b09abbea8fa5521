"""Development certificates (CA, signer, PFX) and certificate thumbprints."""

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from shared.private_files import write_private

DEV_ORGANIZATION = "Esteira DEV — NOT FOR PRODUCTION"
RSA_KEY_BITS = 2048
# Backdate so a certificate made a moment ago is valid on a host whose clock lags a little.
_CLOCK_SKEW = dt.timedelta(minutes=5)


@dataclass(frozen=True)
class DevCertificate:
    """A certificate with its private key, as produced by the dev generators."""

    certificate: x509.Certificate
    private_key: rsa.RSAPrivateKey

    def cert_pem(self) -> bytes:
        """The certificate in PEM."""
        return self.certificate.public_bytes(serialization.Encoding.PEM)


def sha1_thumbprint(cert: x509.Certificate) -> str:
    """SHA-1 of the DER certificate as upper-case hex, the form Windows and the Bulk Signer show."""
    return cert.fingerprint(hashes.SHA1()).hex().upper()


def normalize_thumbprint(thumbprint: str) -> str:
    """Upper-case hex without the spaces or colons that copy-pasted thumbprints carry."""
    return "".join(c for c in thumbprint if c not in " :\t\u200e").upper()


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.COUNTRY_NAME, "BR"),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, DEV_ORGANIZATION),
            x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "Development"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def _new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=RSA_KEY_BITS)


def generate_dev_ca(
    common_name: str = "Esteira DEV Root CA", *, valid_days: int = 3650
) -> DevCertificate:
    """A self-signed RSA-2048 root CA whose subject marks it as a development certificate."""
    key = _new_key()
    now = dt.datetime.now(dt.UTC)
    ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(_name(common_name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _CLOCK_SKEW)
        .not_valid_after(now + dt.timedelta(days=valid_days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(ski, critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski), critical=False
        )
        .sign(key, hashes.SHA256())
    )
    return DevCertificate(cert, key)


def issue_dev_signer(
    ca: DevCertificate, common_name: str = "Esteira DEV Signer", *, valid_days: int = 825
) -> DevCertificate:
    """An RSA-2048 end-entity signing certificate issued by `ca`, shaped like an ICP-Brasil A1."""
    key = _new_key()
    now = dt.datetime.now(dt.UTC)
    ca_ski = ca.certificate.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(ca.certificate.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _CLOCK_SKEW)
        .not_valid_after(now + dt.timedelta(days=valid_days))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            # pyHanko's validator asks for non-repudiation by default, as ICP-Brasil does.
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=True,
                key_encipherment=True,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.CLIENT_AUTH, ExtendedKeyUsageOID.EMAIL_PROTECTION]
            ),
            critical=False,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False
        )
        .sign(ca.private_key, hashes.SHA256())
    )
    return DevCertificate(cert, key)


def export_pfx(
    leaf: DevCertificate, password: str | bytes, chain: Sequence[x509.Certificate] = ()
) -> bytes:
    """A password-protected PKCS#12 holding the leaf key, the leaf and its chain."""
    pw = password.encode() if isinstance(password, str) else password
    return pkcs12.serialize_key_and_certificates(
        name=b"esteira-dev-signer",
        key=leaf.private_key,
        cert=leaf.certificate,
        cas=list(chain) or None,
        encryption_algorithm=serialization.BestAvailableEncryption(pw),
    )


@dataclass(frozen=True)
class DevBundle:
    """Paths of a dev CA and signer written to disk."""

    ca_pem: Path
    signer_pem: Path
    signer_key_pem: Path
    pfx: Path
    password: str


def write_dev_bundle(directory: Path, password: str) -> DevBundle:
    """Write a fresh dev CA (`ca.pem`) and signer (`signer.pem`, `signer.key`, `signer.pfx`)."""
    directory.mkdir(parents=True, exist_ok=True)
    ca = generate_dev_ca()
    leaf = issue_dev_signer(ca)
    bundle = DevBundle(
        ca_pem=directory / "ca.pem",
        signer_pem=directory / "signer.pem",
        signer_key_pem=directory / "signer.key",
        pfx=directory / "signer.pfx",
        password=password,
    )
    bundle.ca_pem.write_bytes(ca.cert_pem())
    bundle.signer_pem.write_bytes(leaf.cert_pem())
    # Key material is private from its creation: never readable by others for a moment.
    write_private(bundle.signer_key_pem, leaf.private_key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ))
    write_private(bundle.pfx, export_pfx(leaf, password, [ca.certificate]))
    return bundle
