"""Synthetic ICP-Brasil policy documents, shaped like ITI's (RFC 3125 DER, `pa:` XML)."""

from __future__ import annotations

import base64
import hashlib
from datetime import UTC, datetime
from pathlib import Path

from asn1crypto import algos, core

from activities.signer.crypto.policy_catalogue import CataloguePolicy


def der_policy(oid: str, inner_hash: bytes) -> bytes:
    """SignaturePolicy { signPolicyHashAlg, signPolicyInfo { OID, dateOfIssue, ... }, hash }."""
    info = _sequence(core.ObjectIdentifier(oid).dump(),
                     core.GeneralizedTime(datetime(2025, 6, 12, tzinfo=UTC)).dump(),
                     core.UTF8String("C=BR, O=ICP-Brasil, OU=test policy, not ITI's").dump())
    return _sequence(algos.DigestAlgorithm({"algorithm": "sha256"}).dump(), info,
                     core.OctetString(inner_hash).dump())


def _sequence(*encoded: bytes) -> bytes:
    return core.Sequence(contents=b"".join(encoded)).dump()


def xml_policy(oid: str, inner_hash: bytes) -> bytes:
    """ITI's XML layout: SignPolicyDigestAlg, SignPolicyInfo/…/Identifier, SignPolicyDigest."""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<pa:SignaturePolicy xmlns:XAdES="http://uri.etsi.org/01903/v1.3.2#" '
        'xmlns:pa="http://www.iti.gov.br/PA#">'
        '<pa:SignPolicyDigestAlg Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/>'
        '<pa:SignPolicyInfo><pa:SignPolicyIdentifier>'
        f'<XAdES:Identifier Qualifier="OIDAsURN">urn:oid:{oid}</XAdES:Identifier>'
        '</pa:SignPolicyIdentifier><pa:DateOfIssue>2025-06-12T00:00:00.000Z</pa:DateOfIssue>'
        '</pa:SignPolicyInfo>'
        f'<pa:SignPolicyDigest>{base64.b64encode(inner_hash).decode()}</pa:SignPolicyDigest>'
        '</pa:SignaturePolicy>'
    ).encode()


def write_policy(directory: Path, entry: CataloguePolicy, *, oid: str | None = None
                 ) -> tuple[Path, str, bytes]:
    """The document for `entry` (or claiming `oid`): its path, file SHA-256 (hex), inner hash."""
    inner = hashlib.sha256(f"{entry.oid} signPolicyInfo".encode()).digest()
    data = (der_policy if entry.encoding == "der" else xml_policy)(oid or entry.oid, inner)
    path = directory / entry.file_name
    path.write_bytes(data)
    return path, hashlib.sha256(data).hexdigest(), inner
