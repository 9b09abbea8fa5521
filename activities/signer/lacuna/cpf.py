"""The CPF an ICP-Brasil certificate carries: an e-CPF's holder or an e-CNPJ's responsible.

The SAN otherNames are ICP-Brasil's (DOC-ICP-04, "Requisitos mínimos para as políticas de
certificado"): an e-CPF has 2.16.76.1.3.1 (the holder's data); an e-CNPJ has 2.16.76.1.3.4
(the data of the person responsible for the company, in the same layout) and 2.16.76.1.3.3
(the CNPJ). The Lacuna Signer names a flow action's user by CPF, so an e-CNPJ signs as its
responsible's CPF.
"""

from __future__ import annotations

import re

from cryptography import x509
from cryptography.x509.oid import NameOID

# "Dados do titular" / "dados do responsável": birth date (8 digits), the CPF (11), then more.
ICP_BRASIL_PF_DATA = x509.ObjectIdentifier("2.16.76.1.3.1")
ICP_BRASIL_PJ_RESPONSIBLE_DATA = x509.ObjectIdentifier("2.16.76.1.3.4")
ICP_BRASIL_PJ_CNPJ = x509.ObjectIdentifier("2.16.76.1.3.3")
_CPF_DATA = (ICP_BRASIL_PF_DATA, ICP_BRASIL_PJ_RESPONSIBLE_DATA)
_CN_CPF = re.compile(r":(\d{11})$")
CNPJ_DIGITS = 14


def cpf_of(certificate: x509.Certificate) -> str | None:
    """The holder's CPF (an e-CNPJ's responsible's), or None when the certificate has none."""
    others = _other_names(certificate)
    for oid in _CPF_DATA:
        digits = others.get(oid)
        if digits and len(digits) >= 19 and digits[8:19].isdigit():
            return digits[8:19]
    names = certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    match = _CN_CPF.search(str(names[0].value)) if names else None
    return match.group(1) if match else None


def cnpj_of(certificate: x509.Certificate) -> str | None:
    """The company's CNPJ of an e-CNPJ, or None."""
    digits = _other_names(certificate).get(ICP_BRASIL_PJ_CNPJ)
    if digits and len(digits) >= CNPJ_DIGITS and digits[:CNPJ_DIGITS].isdigit():
        return digits[:CNPJ_DIGITS]
    return None


def _other_names(certificate: x509.Certificate) -> dict[x509.ObjectIdentifier, str]:
    try:
        san = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return {}
    found: dict[x509.ObjectIdentifier, str] = {}
    for other in san.get_values_for_type(x509.OtherName):
        text = _der_string(other.value)
        if text is not None:
            found.setdefault(other.type_id, text)
    return found


def _der_string(value: bytes) -> str | None:
    """The text of a short DER string (OCTET / PrintableString / UTF8String)."""
    if len(value) < 2 or value[1] & 0x80:
        return None
    return value[2:2 + value[1]].decode("ascii", errors="replace")
