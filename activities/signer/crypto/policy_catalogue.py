"""The ICP-Brasil signature policies a profile may name, one entry per signature format.

Source: DOC-ICP-15.03 v9.1, Anexo 2 (IN ITI nº 33 and nº 34 of 2025), which lists the AD-RB
policies and their signing periods; the URIs are the machine-readable documents ITI publishes
at http://politicas.icpbrasil.gov.br/ (listed in LPA_CAdES.der, LPA_PAdES.der, LPA_XAdES.xml).
The entries are the current versions, all valid for signing from mid-2025 to 22/10/2037:
  CAdES AD-RB v2.4  2.16.76.1.7.1.1.2.4   PA_AD_RB_v2_4.der
  PAdES AD-RB v1.3  2.16.76.1.7.1.11.1.3  PA_PAdES_AD_RB_v1_3.der
  XAdES AD-RB v2.5  2.16.76.1.7.1.6.2.5   PA_AD_RB_v2_5.xml
  CAdES AD-RT v2.4  2.16.76.1.7.1.2.2.4   PA_AD_RT_v2_4.der
  PAdES AD-RT v1.3  2.16.76.1.7.1.12.1.3  PA_PAdES_AD_RT_v1_3.der
AD-RT ("referência de tempo") requires a timestamp from an ICP-Brasil TSA (ACT) over the
signature: a profile naming it signs at B-T or above. XAdES AD-RT is not offered, as this
signer writes no XAdES-T.
The policy documents themselves are not shipped: the operator supplies the file and its
published SHA-256, so a new ITI version is a new catalogue entry, never a silent change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from activities.signer.contracts.jobs import SignatureFormat

ICP_BRASIL_POLICIES = "http://politicas.icpbrasil.gov.br/"
_FORMAT_NAMES = {SignatureFormat.PADES: "PAdES", SignatureFormat.CADES: "CAdES",
                 SignatureFormat.XADES: "XAdES"}


@dataclass(frozen=True)
class CataloguePolicy:
    """One published policy: its name, format, version, OID and where ITI publishes it."""

    name: str
    fmt: SignatureFormat
    version: str
    oid: str
    file_name: str
    encoding: Literal["der", "xml"]

    @property
    def uri(self) -> str:
        """The SPURI signatures carry: the policy document's published address."""
        return ICP_BRASIL_POLICIES + self.file_name

    def describe(self) -> str:
        """`ICP-Brasil AD-RB v2.4 CAdES (2.16.76.1.7.1.1.2.4)`."""
        return (f"ICP-Brasil {self.name} v{self.version} {_FORMAT_NAMES[self.fmt]} "
                f"({self.oid})")


_ENTRIES = (
    CataloguePolicy("AD-RB", SignatureFormat.CADES, "2.4", "2.16.76.1.7.1.1.2.4",
                    "PA_AD_RB_v2_4.der", "der"),
    CataloguePolicy("AD-RB", SignatureFormat.PADES, "1.3", "2.16.76.1.7.1.11.1.3",
                    "PA_PAdES_AD_RB_v1_3.der", "der"),
    CataloguePolicy("AD-RB", SignatureFormat.XADES, "2.5", "2.16.76.1.7.1.6.2.5",
                    "PA_AD_RB_v2_5.xml", "xml"),
    CataloguePolicy("AD-RT", SignatureFormat.CADES, "2.4", "2.16.76.1.7.1.2.2.4",
                    "PA_AD_RT_v2_4.der", "der"),
    CataloguePolicy("AD-RT", SignatureFormat.PADES, "1.3", "2.16.76.1.7.1.12.1.3",
                    "PA_PAdES_AD_RT_v1_3.der", "der"),
)
# Policies whose signatures must carry a timestamp (a profile at B-T or above).
TIMESTAMPED_POLICIES = frozenset({"AD-RT"})
CATALOGUE: dict[str, dict[SignatureFormat, CataloguePolicy]] = {}
for _entry in _ENTRIES:
    CATALOGUE.setdefault(_entry.name, {})[_entry.fmt] = _entry
POLICY_NAMES = tuple(CATALOGUE)


def catalogue_policy(name: str, fmt: SignatureFormat) -> CataloguePolicy:
    """The entry for a policy name and a format; ValueError names what the catalogue has."""
    entries = CATALOGUE.get(name)
    if entries is None:
        raise ValueError(f"policy {name!r} is not in the catalogue ({', '.join(POLICY_NAMES)})")
    if fmt not in entries:
        raise ValueError(f"policy {name} has no {_FORMAT_NAMES[fmt]} entry")
    return entries[fmt]
