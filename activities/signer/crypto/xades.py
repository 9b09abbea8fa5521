"""XAdES-BES/B-B enveloped signatures of XML documents with signxml."""

from base64 import b64encode

from cryptography.hazmat.primitives.asymmetric import ec
from lxml import etree
from signxml import DigestAlgorithm, SignatureMethod
from signxml.util import namespaces, xades_tag
from signxml.xades import XAdESSigner

from ._input import require_content
from .errors import ErrorCode, SignerCryptoError
from .policy import SignaturePolicy
from .signer import LoadedSigner


def secure_parser() -> etree.XMLParser:
    """An lxml parser that neither expands entities nor touches the network (XXE-safe)."""
    return etree.XMLParser(resolve_entities=False, no_network=True, remove_blank_text=False)


def parse_xml(xml: bytes) -> etree._Element:
    """Parse untrusted XML, mapping failures to stable codes."""
    require_content(xml, "XML")
    try:
        root = etree.fromstring(xml, parser=secure_parser())
    except etree.XMLSyntaxError as exc:
        raise SignerCryptoError(ErrorCode.DOCUMENT_CORRUPT, f"not well-formed XML: {exc}") from exc
    if root.getroottree().docinfo.internalDTD is not None:
        # Entities left unexpanded would be signed as references, not as the text a reader
        # sees; signed business XML (NF-e, remittances) never carries a DTD.
        raise SignerCryptoError(
            ErrorCode.DOCUMENT_UNSUPPORTED, "XML with a DOCTYPE is not accepted"
        )
    return root


def policy_identifier(policy: SignaturePolicy) -> str:
    """The XAdES Identifier text for a policy OID (OIDAsURN, as ICP-Brasil signatures use)."""
    return f"urn:oid:{policy.oid}"


class _PolicyXAdESSigner(XAdESSigner):
    """XAdESSigner whose SignaturePolicyId carries the OIDAsURN qualifier and an SPURI.

    signxml 5.2 writes neither; ICP-Brasil AD-RB validators expect both.
    """

    def __init__(self, policy: SignaturePolicy | None, **kwargs) -> None:
        super().__init__(**kwargs)
        self._policy = policy

    def add_signature_policy_identifier(
        self, signed_signature_properties, sig_root, signing_settings
    ):
        if self._policy is None:
            return
        ns = self.namespaces
        spi = etree.SubElement(signed_signature_properties, xades_tag("SignaturePolicyIdentifier"))
        spid = etree.SubElement(spi, xades_tag("SignaturePolicyId"), nsmap=ns)
        sig_policy_id = etree.SubElement(spid, xades_tag("SigPolicyId"), nsmap=ns)
        identifier = etree.SubElement(sig_policy_id, xades_tag("Identifier"), nsmap=ns)
        identifier.set("Qualifier", "OIDAsURN")
        identifier.text = policy_identifier(self._policy)
        if self._policy.description:
            description = etree.SubElement(sig_policy_id, xades_tag("Description"), nsmap=ns)
            description.text = self._policy.description
        policy_hash = etree.SubElement(spid, xades_tag("SigPolicyHash"), nsmap=ns)
        etree.SubElement(
            policy_hash,
            f"{{{namespaces.ds}}}DigestMethod",
            Algorithm=self._policy.xml_digest_uri,
            nsmap=ns,
        )
        value = etree.SubElement(policy_hash, f"{{{namespaces.ds}}}DigestValue", nsmap=ns)
        value.text = b64encode(self._policy.hash_value).decode()
        if self._policy.uri:
            qualifiers = etree.SubElement(spid, xades_tag("SigPolicyQualifiers"), nsmap=ns)
            qualifier = etree.SubElement(qualifiers, xades_tag("SigPolicyQualifier"), nsmap=ns)
            spuri = etree.SubElement(qualifier, xades_tag("SPURI"), nsmap=ns)
            spuri.text = self._policy.uri


def sign_xades(xml: bytes, signer: LoadedSigner, *, policy: SignaturePolicy | None = None) -> bytes:
    """Append an enveloped XAdES signature to the root element and return the signed XML."""
    if signer.private_key is None:
        raise SignerCryptoError(
            ErrorCode.SIGNING_FAILED,
            "XAdES needs an in-memory key (PFX); token keys are not supported",
        )
    root = parse_xml(xml)
    is_ec = isinstance(signer.private_key, ec.EllipticCurvePrivateKey)
    xades = _PolicyXAdESSigner(
        policy,
        signature_algorithm=SignatureMethod.ECDSA_SHA256 if is_ec else SignatureMethod.RSA_SHA256,
        digest_algorithm=DigestAlgorithm.SHA256,
    )
    try:
        # A key object, not PEM: signxml re-parses (and RSA-validates) PEM on every call.
        # No KeyValue: a verifier that finds a bare key may check the signature with it and
        # skip the certificate chain (xmlsec1 does); X509Data alone forces the chain.
        signed = xades.sign(
            root,
            key=signer.private_key,
            cert=[signer.certificate, *signer.chain],
            always_add_key_value=False,
        )
    except etree.XMLSyntaxError as exc:
        raise SignerCryptoError(ErrorCode.DOCUMENT_CORRUPT, f"XML rejected: {exc}") from exc
    except (ValueError, TypeError) as exc:
        raise SignerCryptoError(ErrorCode.SIGNING_FAILED, f"XAdES signing failed: {exc}") from exc
    return etree.tostring(signed, xml_declaration=True, encoding="UTF-8")
