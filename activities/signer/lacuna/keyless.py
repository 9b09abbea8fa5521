"""KEYLESS profiles: the approval block's people sign at the Lacuna Signer, the host holds none.

One Signer action per approver, all in step 1 (any order); `quorum` completed actions end the
wait, one refusal is a veto (as for approvals); each signature found must be an approver's.
"""

from __future__ import annotations

from dataclasses import dataclass
from io import BytesIO
from typing import Any

from cryptography import x509
from pyhanko.pdf_utils.reader import PdfFileReader

from activities.signer.lacuna.cpf import cpf_of
from activities.signer.models.jobs import SigningProfile


def approvers_of(profile: SigningProfile) -> list[dict[str, Any]]:
    """The approval block's approvers (name, email, cpf)."""
    return list((profile.approval or {}).get("approvers") or [])


def quorum_of(profile: SigningProfile) -> int:
    """How many approvers must sign (the approval block's quorum)."""
    return int((profile.approval or {}).get("quorum") or 1)


def approver_flow(profile: SigningProfile) -> list[dict[str, Any]]:
    """One Signer action per approver, all in step 1: they sign in any order."""
    return [{"type": "Signer", "step": 1,
             "user": {"name": a["name"], "identifier": a.get("cpf"), "email": a["email"]}}
            for a in approvers_of(profile)]


@dataclass(frozen=True)
class Tally:
    """What the approvers did on the Signer: CPFs that signed, and who refused (first one)."""

    signed: frozenset[str]
    refused_by: str | None


def tally(document: dict[str, Any]) -> Tally:
    """Count the document's Signer actions by status."""
    actions = [a for a in document.get("flowActions") or [] if a.get("type") == "Signer"]
    signed = frozenset((a.get("user") or {}).get("identifier") or ""
                       for a in actions if a.get("status") == "Completed")
    refused = next((a for a in actions if a.get("status") == "Refused"), None)
    who = None
    if refused is not None:
        user = refused.get("user") or {}
        who = user.get("name") or user.get("email") or "an approver"
    elif document.get("status") == "Refused":
        who = "an approver"
    return Tally(signed, who)


def pades_signer_cpfs(pdf: bytes) -> list[str | None]:
    """Each embedded signature's signer CPF (None: the certificate carries none)."""
    return [cpf_of(x509.load_der_x509_certificate(sig.signer_cert.dump()))
            for sig in PdfFileReader(BytesIO(pdf), strict=False).embedded_regular_signatures]


def missing_signatures(profile: SigningProfile, signed: frozenset[str],
                       pdf: bytes) -> str | None:
    """Why the document lacks a signing approver's own signature (None: it has them all)."""
    allowed = {a.get("cpf") for a in approvers_of(profile)}
    cpfs = pades_signer_cpfs(pdf)
    strangers = [cpf for cpf in cpfs if cpf not in allowed]
    if strangers:
        return f"{len(strangers)} signature(s) are not by an approver of profile {profile.name}"
    absent = sorted(signed - set(cpfs))
    if absent:
        return f"no signature of the approver(s) with CPF {', '.join(absent)}"
    # A CPF is one person's certificate: distinct CPFs are distinct certificates.
    if len(set(cpfs)) < quorum_of(profile):
        return (f"{len(set(cpfs))} approver signature(s); the quorum is "
                f"{quorum_of(profile)}")
    return None
