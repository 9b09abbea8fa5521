"""Signature levels (ETSI baseline profiles) and which format reaches which here.

PAdES (ETSI EN 319 142-1): pyHanko writes B-B, B-T (signature timestamp), B-LT (DSS with the
certificates, OCSP responses and CRLs) and B-LTA (B-LT plus a document timestamp).
CAdES (EN 319 122-1): pyHanko writes B-B and B-T (signature-time-stamp attribute); it has no
CAdES-LT writer, so CAdES-LT is not offered. XAdES (EN 319 132-1): signxml writes B-B only;
XAdES-T and -LT are not offered. A profile asking for a level its format can't reach is
refused when it is saved, never downgraded at signing.
"""

from __future__ import annotations

from enum import StrEnum

from activities.signer.contracts.jobs import SignatureFormat


class SignatureLevel(StrEnum):
    """How much a signature carries beyond the signature itself."""

    B_B = "B-B"
    B_T = "B-T"
    B_LT = "B-LT"
    B_LTA = "B-LTA"

    @property
    def timestamped(self) -> bool:
        """A TSA's timestamp over the signature value is embedded."""
        return self is not SignatureLevel.B_B

    @property
    def long_term(self) -> bool:
        """Certificates and revocation data (OCSP first, CRL otherwise) are embedded."""
        return self in (SignatureLevel.B_LT, SignatureLevel.B_LTA)


SUPPORTED: dict[SignatureFormat, frozenset[SignatureLevel]] = {
    SignatureFormat.PADES: frozenset(SignatureLevel),
    SignatureFormat.CADES: frozenset({SignatureLevel.B_B, SignatureLevel.B_T}),
    SignatureFormat.XADES: frozenset({SignatureLevel.B_B}),
}
# What the README and the refusals call a level in each format's own naming.
_NAMES = {SignatureFormat.PADES: "PAdES", SignatureFormat.CADES: "CAdES",
          SignatureFormat.XADES: "XAdES"}


def level_name(fmt: SignatureFormat, level: SignatureLevel) -> str:
    """`PAdES B-LT`, `CAdES-T` (the CAdES/XAdES spelling for T and LT)."""
    if fmt is SignatureFormat.PADES or level is SignatureLevel.B_B:
        return f"{_NAMES[fmt]} {level.value}"
    return f"{_NAMES[fmt]}-{level.value.removeprefix('B-')}"


def unsupported(fmt: SignatureFormat, level: SignatureLevel) -> str | None:
    """Why `fmt` can't be signed at `level` here (None: it can)."""
    if level in SUPPORTED[fmt]:
        return None
    reachable = ", ".join(sorted(level_name(fmt, lv) for lv in SUPPORTED[fmt]))
    return (f"{level_name(fmt, level)} is not supported (this signer writes {reachable}; "
            "only PAdES reaches B-LT and B-LTA)")
