"""Whether each profile's certificate opens (in a worker): DEGRADED is shown, never fatal."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from activities.signer.crypto.errors import SignerCryptoError
from activities.signer.engine import open_certificate
from activities.signer.models.jobs import SigningProfile
from activities.signer.profiles import certificate_spec


@dataclass(frozen=True)
class ProfileHealth:
    """A profile's state for the banner and readiness."""

    name: str
    ok: bool
    detail: str


def _check(profile: SigningProfile) -> ProfileHealth:
    try:
        signer = open_certificate(certificate_spec(profile))
    except SignerCryptoError as exc:
        return ProfileHealth(profile.name, False, f"DEGRADED: {exc.message}")
    except OSError as exc:
        return ProfileHealth(profile.name, False, f"DEGRADED: {exc}")
    try:
        where = profile.pfx_path if profile.cert_source == "pfx" else profile.pkcs11_module
        return ProfileHealth(profile.name, True,
                             f"{profile.cert_source} ({where}) {signer.subject} "
                             f"thumbprint={signer.thumbprint}")
    finally:
        signer.close()


def profile_subject(profile: SigningProfile) -> str:
    """What a check looked at: a finding on another version of the profile says nothing."""
    return f"{profile.name}:{profile.version}:{profile.updated_at.isoformat()}"


async def check_profile(profile: SigningProfile) -> ProfileHealth:
    """Open the profile's certificate off the event loop."""
    return await asyncio.to_thread(_check, profile)
