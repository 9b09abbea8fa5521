"""The CPF an ICP-Brasil certificate carries (SAN otherName 2.16.76.1.3.1 or `NAME:CPF`)."""

from __future__ import annotations

import re

from cryptography import x509
from cryptography.x509.oid import NameOID

# ICP-Brasil "dados do titular": birth date (8 digits), then the CPF (11 digits), then more.
ICP_BRASIL_PF_DATA = x509.ObjectIdentifier("2.16.76.1.3.1")
_CN_CPF = re.compile(r":(\d{11})$")


def cpf_of(certificate: x509.Certificate) -> str | None:
    """The holder's CPF, or None when the certificate carries none."""
    try:
        san = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        san = None
    for other in san.get_values_for_type(x509.OtherName) if san else []:
        if other.type_id == ICP_BRASIL_PF_DATA:
            digits = _der_string(other.value)
            if digits and len(digits) >= 19 and digits[8:19].isdigit():
                return digits[8:19]
    names = certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    match = _CN_CPF.search(str(names[0].value)) if names else None
    return match.group(1) if match else None


def _der_string(value: bytes) -> str | None:
    """The text of a short DER string (OCTET / PrintableString / UTF8String)."""
    if len(value) < 2 or value[1] & 0x80:
        return None
    return value[2:2 + value[1]].decode("ascii", errors="replace")
