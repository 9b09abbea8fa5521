"""A profile's signature policy: what its signatures declare, why it can't, how it reads."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import os
import threading

from activities.signer.contracts.jobs import SignatureFormat, SignerErrorCode
from activities.signer.crypto.policy import SignaturePolicy
from activities.signer.crypto.policy_catalogue import catalogue_policy
from activities.signer.crypto.policy_document import PolicyDocumentError, load_policy
from activities.signer.health import ProfileHealth
from activities.signer.job_steps import JobFailed
from activities.signer.models.jobs import SigningProfile

# (name, format, path, digest, file identity) -> the loaded identifier: a job costs one stat,
# and a replaced file is read again.
_LOADED: dict[tuple, SignaturePolicy] = {}
_LOCK = threading.Lock()
_MAX_LOADED = 64


def profile_format(profile: SigningProfile) -> SignatureFormat | None:
    """The single format a profile signs in (None for `auto`)."""
    return None if profile.format == "auto" else SignatureFormat(profile.format.capitalize())


def resolve(profile: SigningProfile, fmt: SignatureFormat) -> SignaturePolicy:
    """The catalogue policy of the profile for `fmt`, read from the operator's document."""
    try:
        entry = catalogue_policy(profile.policy_name or "", fmt)
    except ValueError as exc:
        raise PolicyDocumentError(str(exc)) from None
    path, digest = profile.policy_document or "", profile.policy_digest or ""
    if not path or not digest:
        raise PolicyDocumentError(f"policy {profile.policy_name} needs PolicyDocument and "
                                  "PolicyDigest")
    try:
        stat = os.stat(path)
        identity = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
    except OSError:
        identity = None
    key = (entry, path, digest, identity)
    with _LOCK:
        cached = _LOADED.get(key)
    if cached is not None and identity is not None:
        return cached
    loaded = load_policy(entry, path, digest)
    with _LOCK:
        if len(_LOADED) >= _MAX_LOADED:
            _LOADED.clear()  # replaced files leave stale keys; a few re-reads are cheap
        _LOADED[key] = loaded
    return loaded


def policy_for(profile: SigningProfile, fmt: SignatureFormat) -> dict | None:
    """The policy the engine embeds for this profile and format (None: no policy).

    Raises PolicyDocumentError when a catalogue policy's document is missing or wrong.
    """
    if not profile.policy_name:
        return profile.policy
    policy = resolve(profile, fmt)
    return {"oid": policy.oid, "hash_algorithm": policy.hash_algorithm,
            "hash_base64": base64.b64encode(policy.hash_value).decode(), "uri": policy.uri}


async def job_policy(profile: SigningProfile, fmt: SignatureFormat) -> dict | None:
    """`policy_for` off the event loop; an unusable document fails the job as DEGRADED."""
    if not profile.policy_name:
        return profile.policy
    try:
        return await asyncio.to_thread(policy_for, profile, fmt)
    except PolicyDocumentError as exc:
        raise JobFailed(SignerErrorCode.PROFILE_DEGRADED,
                        f"The profile's signature policy is unusable: {exc.reason}") from None


def policy_health(health: ProfileHealth, profile: SigningProfile) -> ProfileHealth:
    """The profile's health, DEGRADED further when its policy document can't back signatures."""
    if not health.ok or not profile.policy_name:
        return health
    fmt = profile_format(profile)
    if fmt is None:
        problem = f"policy {profile.policy_name} needs a fixed format (pades, cades or xades)"
    else:
        try:
            resolve(profile, fmt)
            return health
        except PolicyDocumentError as exc:
            problem = exc.reason
    return dataclasses.replace(health, ok=False, detail=f"DEGRADED: {problem}")


def describe_policy(profile: SigningProfile) -> str:
    """What the profile's signatures declare, for the banner and the API (`none` if nothing)."""
    if profile.policy_name:
        fmt = profile_format(profile)
        try:
            entry = catalogue_policy(profile.policy_name, fmt) if fmt else None
        except ValueError:
            entry = None
        return entry.describe() if entry else f"{profile.policy_name} (no format)"
    if profile.policy:
        return f"{profile.policy.get('oid')} (hash configured by hand)"
    return "none"
