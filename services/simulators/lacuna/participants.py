"""Simulated participants: they sign a document version with a real (dev) certificate."""

from __future__ import annotations

import tempfile
from pathlib import Path

from activities.signer import engine
from activities.signer.profiles import format_for
from services.simulators.lacuna.settings import LacunaSimSettings
from services.simulators.lacuna.state import SignerApiError


def sign_version(settings: LacunaSimSettings, filename: str, data: bytes) -> bytes:
    """Sign `data` as the Signer would (PAdES for PDF, XAdES for XML, CAdES otherwise)."""
    if not settings.pfx_path:
        raise SignerApiError(500, "SimulatorNotConfigured",
                             "LACUNA_SIM_PFX_PATH is not set: participants can't sign.")
    password = Path(settings.pfx_password_file).read_text().strip() \
        if settings.pfx_password_file else None
    spec = engine.CertificateSpec(cache_key=f"lacuna-sim:{settings.pfx_path}", source="pfx",
                                  secret=password, pfx_path=settings.pfx_path)
    with tempfile.TemporaryDirectory(prefix="lacuna-sim-") as tmp:
        staged = Path(tmp) / Path(filename).name
        staged.write_bytes(data)
        artifact = Path(tmp) / "signed.bin"
        outcome = engine.sign(engine.SignRequest(certificate=spec,
                                                 fmt=format_for("auto", filename),
                                                 staged=str(staged), artifact=str(artifact)))
        if not outcome.ok:
            raise SignerApiError(500, "SigningFailed", outcome.message)
        return artifact.read_bytes()
