"""Lacuna Signer test kit: the simulator on loopback, a CPF-bearing PKI, remote profiles."""

from __future__ import annotations

import base64
import secrets
from dataclasses import dataclass
from pathlib import Path

import httpx
from cryptography.hazmat.primitives import serialization

from activities.signer.crypto.certs import export_pfx, generate_dev_ca, issue_dev_signer
from activities.signer.models.jobs import SigningProfile
from activities.signer.profiles import ProfileConfig
from tests.support.approvals import APPROVERS

HOLDER_CPF = "12345678909"
SIM_KEY = "tests|lacuna-sim-key"
# Ana and Bruno of the approvals kit, with the CPFs their Signer actions carry.
KEYLESS_APPROVERS = [dict(a, cpf=cpf) for a, cpf in zip(APPROVERS, ("11144477735",
                                                                     "52998224725"),
                                                         strict=True)]


@dataclass(frozen=True)
class HolderPki:
    """A CA and a holder certificate whose CN carries a CPF (ICP-Brasil `NAME:CPF`)."""

    ca_pem: Path
    pfx: Path
    password_file: Path


def write_holder_pki(directory: Path, cpf: str = HOLDER_CPF) -> HolderPki:
    """Generate the CA + e-CPF-like holder certificate under `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    ca = generate_dev_ca()
    leaf = issue_dev_signer(ca, f"TITULAR DE TESTE:{cpf}")
    password = secrets.token_urlsafe(12)
    pki = HolderPki(directory / "ca.pem", directory / "holder.pfx", directory / "holder.pw")
    pki.ca_pem.write_bytes(ca.certificate.public_bytes(serialization.Encoding.PEM))
    pki.pfx.write_bytes(export_pfx(leaf, password, [ca.certificate]))
    pki.password_file.write_text(password)
    return pki


def remote_profile(base: SigningProfile, name: str, **fields: object) -> SigningProfile:
    """A copy of `base` (certificate, trust roots) under a new name with other fields."""
    data = base.model_dump(exclude={"name", "input_folder", "is_dev", "version",
                                    "created_at", "updated_at"})
    data.update(fields)
    return SigningProfile(name=name, **data)


def keyless_profile(name: str, *, quorum: int, trust_roots: list[str],
                    **fields: object) -> SigningProfile:
    """A KEYLESS profile (signers = Approvers: Ana and Bruno), validated as configuration is."""
    config = ProfileConfig(name=name, signers="Approvers", trust_roots=trust_roots,
                           approval={"approvers": KEYLESS_APPROVERS, "quorum": quorum},
                           **fields)
    return SigningProfile(**config.model_dump(exclude={"policy", "input_folder"}))


class SimControl:
    """The simulator's `/_sim` controls and its public API, over real HTTP."""

    def __init__(self, url: str) -> None:
        self.http = httpx.AsyncClient(base_url=url, headers={"X-Api-Key": SIM_KEY},
                                      timeout=30)

    async def document(self, document_id: str) -> dict:
        return (await self.http.get(f"/api/documents/{document_id}")).raise_for_status().json()

    async def seed(self, folder_id: str, filename: str, data: bytes, flow: list[dict]) -> dict:
        return (await self.http.post("/_sim/documents", json={
            "folderId": folder_id, "filename": filename, "flowActions": flow,
            "contentBase64": base64.b64encode(data).decode()})).raise_for_status().json()

    async def act(self, document_id: str, action_id: str, verb: str) -> dict:
        return (await self.http.post(f"/_sim/documents/{document_id}/actions/{action_id}/{verb}",
                                     json={"reason": "no"})).raise_for_status().json()

    async def fault(self, **rule: object) -> None:
        (await self.http.post("/_sim/faults", json=rule)).raise_for_status()
