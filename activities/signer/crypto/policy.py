"""Signature policy identifier (e.g. ICP-Brasil AD-RB) embedded in CAdES, PAdES and XAdES."""

from dataclasses import dataclass

from asn1crypto import algos, core
from pyhanko.sign.ades.cades_asn1 import (
    SignaturePolicyId,
    SignaturePolicyIdentifier,
    SigPolicyQualifierInfo,
    SigPolicyQualifierInfos,
)

# XML digest method URIs for the hash algorithms a policy hash may use.
XML_DIGEST_URIS = {
    "sha256": "http://www.w3.org/2001/04/xmlenc#sha256",
    "sha384": "http://www.w3.org/2001/04/xmldsig-more#sha384",
    "sha512": "http://www.w3.org/2001/04/xmlenc#sha512",
}


@dataclass(frozen=True)
class SignaturePolicy:
    """A signature policy to declare: OID, hash of the policy document, and where it lives.

    `hash_value` is the policy's own `signPolicyHash` as published by the issuer (for
    ICP-Brasil, the value stored inside the policy DER/XML, not the hash of the whole file).
    """

    oid: str
    hash_value: bytes
    hash_algorithm: str = "sha256"
    uri: str | None = None
    description: str = ""

    def __post_init__(self) -> None:
        if self.hash_algorithm not in XML_DIGEST_URIS:
            raise ValueError(f"unsupported policy hash algorithm {self.hash_algorithm!r}")
        if not self.hash_value:
            raise ValueError("policy hash value is empty")

    @property
    def xml_digest_uri(self) -> str:
        """The XML-DSig DigestMethod URI of the hash algorithm."""
        return XML_DIGEST_URIS[self.hash_algorithm]

    def to_cms(self) -> SignaturePolicyIdentifier:
        """The CAdES `signature-policy-identifier` attribute value (RFC 5126 §5.8.1)."""
        policy_id = {
            "sig_policy_id": self.oid,
            "sig_policy_hash": algos.DigestInfo(
                {
                    "digest_algorithm": algos.DigestAlgorithm({"algorithm": self.hash_algorithm}),
                    "digest": self.hash_value,
                }
            ),
        }
        if self.uri:
            spuri = {"sig_policy_qualifier_id": "sp_uri", "sig_qualifier": core.IA5String(self.uri)}
            policy_id["sig_policy_qualifiers"] = SigPolicyQualifierInfos(
                [SigPolicyQualifierInfo(spuri)]
            )
        built = SignaturePolicyIdentifier({"signature_policy_id": SignaturePolicyId(policy_id)})
        # A parsed value dumps without asn1crypto re-encoding it on every signature.
        return SignaturePolicyIdentifier.load(built.dump())
