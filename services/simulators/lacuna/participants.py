"""Simulated participants: they sign a document version with a real (dev) certificate.

The simulator stands for a system we don't own, so it signs with pyHanko and signxml
directly, never with Esteira's own signing engine.
"""

from __future__ import annotations

import asyncio
from io import BytesIO
from pathlib import Path

from cryptography.hazmat.primitives.serialization import Encoding, pkcs12
from lxml import etree
from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
from pyhanko.sign import fields, signers
from signxml import DigestAlgorithm
from signxml.xades import XAdESSigner

from services.simulators.lacuna.settings import LacunaSimSettings
from services.simulators.lacuna.state import SignerApiError


def sign_version(settings: LacunaSimSettings, filename: str, data: bytes) -> bytes:
    """Sign `data` as the Signer would (PAdES for PDF, XAdES for XML, CAdES otherwise)."""
    if not settings.pfx_path:
        raise SignerApiError(500, "SimulatorNotConfigured",
                             "LACUNA_SIM_PFX_PATH is not set: participants can't sign.")
    password = Path(settings.pfx_password_file).read_text().strip() \
        if settings.pfx_password_file else None
    return sign_with(Path(settings.pfx_path).read_bytes(), password, filename, data)


def sign_with(pfx: bytes, password: str | None, filename: str, data: bytes) -> bytes:
    """Sign `data` with this PFX (a participant's own, or the shared one)."""
    suffix = Path(filename).suffix.lower()
    try:
        if suffix == ".pdf":
            return _pades(data, pfx, password)
        if suffix == ".xml":
            return _xades(data, pfx, password)
        return _cades(data, pfx, password)
    except Exception as exc:  # a simulated Signer answers 500 with the reason, like the real one
        raise SignerApiError(500, "SigningFailed", f"{type(exc).__name__}: {exc}") from None


def _cms_signer(pfx: bytes, password: str | None) -> signers.SimpleSigner:
    signer = signers.SimpleSigner.load_pkcs12_data(
        pfx, other_certs=None, passphrase=password.encode() if password else None)
    if signer is None:
        raise ValueError("the PFX could not be opened")
    return signer


def _pades(pdf: bytes, pfx: bytes, password: str | None) -> bytes:
    writer = IncrementalPdfFileWriter(BytesIO(pdf), strict=False)
    # Each participant signs the version the previous one left: never reuse a filled field.
    taken = {name for name, _, _ in fields.enumerate_sig_fields(writer)}
    field = next(f"Signature{n}" for n in range(1, len(taken) + 2)
                 if f"Signature{n}" not in taken)
    meta = signers.PdfSignatureMetadata(field_name=field, md_algorithm="sha256",
                                        subfilter=fields.SigSeedSubFilter.PADES)
    out = BytesIO()
    signers.sign_pdf(writer, meta, signer=_cms_signer(pfx, password), output=out)
    return out.getvalue()


def _cades(content: bytes, pfx: bytes, password: str | None) -> bytes:
    # Runs in a worker thread (the app's `to_thread`), where no event loop is running.
    signed = asyncio.run(_cms_signer(pfx, password).async_sign_general_data(
        content, "sha256", detached=True, use_cades=True))
    return signed.dump()


def _xades(xml: bytes, pfx: bytes, password: str | None) -> bytes:
    key, cert, others = pkcs12.load_key_and_certificates(
        pfx, password.encode() if password else None)
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    root = etree.fromstring(xml, parser=parser)
    chain = [c.public_bytes(Encoding.PEM) for c in (cert, *others)]
    signed = XAdESSigner(digest_algorithm=DigestAlgorithm.SHA256).sign(
        root, key=key, cert=b"".join(chain).decode())
    return etree.tostring(signed, xml_declaration=True, encoding="UTF-8")
