"""Reading an operator-supplied ICP-Brasil policy document into the identifier signatures carry.

Two digests are involved, and they are different values:
- the SHA-256 of the whole file, which ITI publishes next to it (`<name>der-sha256.txt`) and in
  the LPA's PolicyDigest: the operator configures it (PolicyDigest) and it is checked here, in
  constant time, before anything else is read from the file;
- the policy's own hash stored *inside* the document (RFC 3125 `SignaturePolicy.signPolicyHash`
  for DER policies, `pa:SignPolicyDigest` for XML ones), which is what goes into the signature's
  sigPolicyHash. It is what ITI's Verificador de Conformidade, Demoiselle and EU DSS compare a
  signature against; a signature carrying the file's SHA-256 instead is refused by ITI's
  validator ("O valor do resumo criptográfico não é equivalente ao esperado").
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
from pathlib import Path

from asn1crypto import algos, core
from lxml import etree

from .policy import XML_DIGEST_URIS, SignaturePolicy
from .policy_catalogue import CataloguePolicy
from .xades import secure_parser

PA_NS = "http://www.iti.gov.br/PA#"
XADES_NS = "http://uri.etsi.org/01903/v1.3.2#"
_XML_ALGORITHMS = {uri: name for name, uri in XML_DIGEST_URIS.items()}
_HEX_DIGEST = re.compile(r"^[0-9a-fA-F]{64}$")
# Policy documents are a few KB; anything far bigger is not one.
MAX_DOCUMENT_BYTES = 1024 * 1024


class PolicyDocumentError(Exception):
    """The policy document can't back a signature; `reason` says why, for DEGRADED."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def expected_digest(text: str) -> bytes:
    """A configured SHA-256: 64 hex digits (ITI's -sha256.txt) or base64 (the LPA's form)."""
    value = text.strip()
    if _HEX_DIGEST.match(value):
        return bytes.fromhex(value)
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != 32:
        raise ValueError("must be a SHA-256: 64 hex digits or 44 base64 characters")
    return raw


def load_policy(entry: CataloguePolicy, path: str, digest: str) -> SignaturePolicy:
    """The identifier to embed, after the file matched its digest and names `entry`'s OID."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise PolicyDocumentError(f"policy document {path} cannot be read "
                                  f"({exc.strerror or type(exc).__name__})") from None
    actual = hashlib.sha256(data).digest()
    try:
        wanted = expected_digest(digest)
    except ValueError as exc:
        raise PolicyDocumentError(f"PolicyDigest {exc}") from None
    if not hmac.compare_digest(actual, wanted):
        raise PolicyDocumentError(
            f"policy document {path} does not match PolicyDigest (its SHA-256 is "
            f"{actual.hex()}); supply the file ITI publishes as {entry.file_name}")
    if len(data) > MAX_DOCUMENT_BYTES:
        raise PolicyDocumentError(f"policy document {path} is too big to be a policy")
    try:
        oid, algorithm, value = (_from_der(data) if entry.encoding == "der"
                                 else _from_xml(data))
    except (ValueError, TypeError, KeyError, etree.XMLSyntaxError) as exc:
        raise PolicyDocumentError(f"policy document {path} is not a readable "
                                  f"{entry.encoding.upper()} signature policy ({exc})") from None
    if oid != entry.oid:
        raise PolicyDocumentError(f"policy document {path} is policy {oid}, not "
                                  f"{entry.describe()}")
    return SignaturePolicy(oid=oid, hash_value=value, hash_algorithm=algorithm, uri=entry.uri)


def _from_der(data: bytes) -> tuple[str, str, bytes]:
    """RFC 3125 SignaturePolicy: SEQUENCE { signPolicyHashAlg, signPolicyInfo, signPolicyHash }."""
    policy = core.Sequence.load(data, strict=True)
    if len(policy) < 3:
        raise ValueError("SignaturePolicy has fewer than three fields")
    algorithm = algos.DigestAlgorithm.load(policy[0].dump())["algorithm"].native
    info = core.Sequence.load(policy[1].dump())
    oid = core.ObjectIdentifier.load(info[0].dump()).dotted
    value = core.OctetString.load(policy[2].dump()).native
    return oid, _known(algorithm), value


def _from_xml(data: bytes) -> tuple[str, str, bytes]:
    """ITI's XML form: pa:SignPolicyDigestAlg, pa:SignPolicyInfo, pa:SignPolicyDigest."""
    root = etree.fromstring(data, parser=secure_parser())
    ns = {"pa": PA_NS, "xades": XADES_NS}
    if root.tag != f"{{{PA_NS}}}SignaturePolicy":
        raise ValueError(f"root element is {root.tag}, not pa:SignaturePolicy")
    method = root.find("pa:SignPolicyDigestAlg", ns)
    uri = method.get("Algorithm") if method is not None else None
    if uri not in _XML_ALGORITHMS:
        raise ValueError(f"digest algorithm {uri} is not supported")
    identifier = (root.findtext("pa:SignPolicyInfo/pa:SignPolicyIdentifier/xades:Identifier",
                                namespaces=ns) or "").strip()
    digest = (root.findtext("pa:SignPolicyDigest", namespaces=ns) or "").strip()
    if not identifier or not digest:
        raise ValueError("no policy identifier or no pa:SignPolicyDigest")
    return (identifier.removeprefix("urn:oid:"), _XML_ALGORITHMS[uri],
            base64.b64decode(digest, validate=True))


def _known(algorithm: str) -> str:
    if algorithm not in XML_DIGEST_URIS:
        raise ValueError(f"digest algorithm {algorithm} is not supported")
    return algorithm
