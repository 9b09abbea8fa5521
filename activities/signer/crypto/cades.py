"""CAdES detached signatures (DER CMS SignedData) over arbitrary bytes, e.g. CNAB240 files."""

from pyhanko.sign.ades.api import CAdESSignedAttrSpec
from pyhanko.sign.general import SigningError
from pyhanko.sign.signers.pdf_cms import PdfCMSSignedAttributes
from pyhanko.sign.timestamps import TimeStamper

from ._input import require_content
from ._sync import run_sync
from .errors import ErrorCode, SignerCryptoError
from .policy import SignaturePolicy
from .signer import LoadedSigner


async def async_sign_cades(
    content: bytes, signer: LoadedSigner, *, policy: SignaturePolicy | None = None,
    timestamper: TimeStamper | None = None, md_algorithm: str = "sha256",
) -> bytes:
    """A detached CAdES B-B signature of `content` as DER (the `.p7m` body).

    With a `timestamper`, CAdES-T: the signature-time-stamp unsigned attribute holds a TSA's
    token over the signature value (RFC 5126 §6.1.1).
    """
    require_content(content, "content to sign")
    attrs = PdfCMSSignedAttributes(
        cades_signed_attrs=CAdESSignedAttrSpec(
            signature_policy_identifier=policy.to_cms() if policy else None
        )
    )
    try:
        info = await signer.cms_signer.async_sign_general_data(
            content, md_algorithm, detached=True, use_cades=True, signed_attr_settings=attrs,
            timestamper=timestamper,
        )
    except SigningError as exc:
        raise SignerCryptoError(ErrorCode.SIGNING_FAILED, str(exc)) from exc
    return info.dump()


def sign_cades(
    content: bytes, signer: LoadedSigner, *, policy: SignaturePolicy | None = None,
    timestamper: TimeStamper | None = None, md_algorithm: str = "sha256",
) -> bytes:
    """Synchronous `async_sign_cades`, for code outside an event loop."""
    return run_sync(async_sign_cades(content, signer, policy=policy, timestamper=timestamper,
                                     md_algorithm=md_algorithm))
