"""Readiness of a profile's level: its secrets are set and a TSA answers (else DEGRADED)."""

from __future__ import annotations

import dataclasses

from pyhanko.sign.timestamps.common_utils import dummy_digest

from activities.signer.crypto.errors import SignerCryptoError
from activities.signer.crypto.timestamps import FailoverTimeStamper
from activities.signer.health import ProfileHealth
from activities.signer.level_config import missing_secrets, tsa_endpoints
from activities.signer.models.jobs import SigningProfile


async def level_health(health: ProfileHealth, profile: SigningProfile) -> ProfileHealth:
    """`health`, DEGRADED further when a named secret is unset or no TSA answers."""
    if not health.ok:
        return health
    missing = missing_secrets(profile.timestamp, profile.csc)
    if missing:
        return dataclasses.replace(health, ok=False, detail=(
            f"DEGRADED: environment variable(s) {', '.join(missing)} not set on this worker"))
    if profile.signature_level == "B-B" or not profile.timestamp:
        return health
    algorithm = profile.timestamp.get("hash_algorithm", "sha256")
    answered, problems = [], []
    # Each TSA on its own: a dead first TSA is worth saying even when the next one answers.
    for endpoint in tsa_endpoints(profile.timestamp):
        try:
            await FailoverTimeStamper([endpoint]).async_timestamp(dummy_digest(algorithm),
                                                                  algorithm)
            answered.append(endpoint.shown)
        except SignerCryptoError as exc:
            problems.append(exc.message.removeprefix("no TSA answered (").removesuffix(")"))
    if not answered:
        return dataclasses.replace(health, ok=False, detail=(
            f"DEGRADED: {profile.signature_level} needs a timestamp and no TSA answers "
            f"({'; '.join(problems)})"))
    note = f"; unreachable, skipped: {'; '.join(problems)}" if problems else ""
    return dataclasses.replace(
        health, detail=f"{health.detail} · {profile.signature_level}: TSA "
                       f"{answered[0]} answers{note}")
