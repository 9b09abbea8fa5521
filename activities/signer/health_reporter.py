"""A worker opens each enabled profile's key and records what it found; readers only read."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.health import check_profile, profile_subject
from activities.signer.lacuna.health import method_health
from activities.signer.level_health import level_health
from activities.signer.models.jobs import SigningProfile
from activities.signer.profiles import is_keyless
from activities.signer.signature_policy import policy_health
from shared.findings import read_findings, record_finding
from shared.settings import Settings

log = logging.getLogger("esteira.signer.health")
# An edited profile is looked at within this; an unchanged one is opened again only every
# RECHECK_SECONDS (opening a PFX costs ~80 ms, a token session more).
SCAN_SECONDS = 5.0
RECHECK_SECONDS = 60.0
# What the banner, readiness and the dashboard say of a KEYLESS profile (never DEGRADED).
KEYLESS_DETAIL = "cert=none (approvers sign)"


def finding_key(profile_name: str) -> str:
    """The finding a profile's check is recorded under (its readiness line's name too)."""
    return f"signing-profile:{profile_name}"


class ProfileHealthReporter:
    """Checks enabled profiles in this (worker) process and records each verdict."""

    def __init__(self, settings: Settings, sessions: async_sessionmaker[AsyncSession],
                 reporter: str) -> None:
        self.settings = settings
        self.sessions = sessions
        self.reporter = reporter
        self._checked: dict[str, tuple[str, float]] = {}

    async def report_once(self) -> None:
        """Check every enabled profile that changed or is due, and record the results."""
        async with self.sessions() as session:
            profiles = (await session.exec(select(SigningProfile).where(
                SigningProfile.enabled))).all()
        for profile in profiles:
            if is_keyless(profile):
                continue  # no key to open: its approvers sign with their own certificates
            subject = profile_subject(profile)
            last = self._checked.get(profile.name)
            if last and last[0] == subject and time.monotonic() - last[1] < RECHECK_SECONDS:
                continue
            try:
                health = await method_health(await check_profile(profile), profile,
                                             self.settings)
                # The policy document is read and its digest checked here, at every boot.
                health = await asyncio.to_thread(policy_health, health, profile)
                # Above B-B: the TSAs answer (one real timestamp request each).
                health = await level_health(health, profile)
                ok, detail = health.ok, health.detail
            except Exception as exc:
                # One profile's unexpected error must not leave the others unchecked (nor
                # reopen every key each round); the detail is public: the type only.
                log.warning("Could not check signing profile %s", profile.name, exc_info=True)
                ok, detail = False, f"DEGRADED: the check raised {type(exc).__name__}"
            await record_finding(self.sessions, finding_key(profile.name), ok=ok,
                                 detail=detail, reporter=self.reporter, subject=subject)
            self._checked[profile.name] = (subject, time.monotonic())

    async def run(self, stop: asyncio.Event) -> None:
        """Report until `stop` is set; a failed round is logged and tried again."""
        while not stop.is_set():
            try:
                await self.report_once()
            except Exception:
                log.exception("Could not check the signing profiles; trying again")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), SCAN_SECONDS)


async def recorded_health(profile: SigningProfile,
                          sessions: async_sessionmaker[AsyncSession]) -> tuple[bool, str]:
    """What a worker last found for this version of the profile (read only: opens nothing)."""
    if is_keyless(profile):
        return True, KEYLESS_DETAIL
    key = finding_key(profile.name)
    finding = (await read_findings(sessions, [key])).get(key)
    if finding is None:
        return False, "not checked yet: no worker has opened this profile's key"
    if finding.subject != profile_subject(profile):
        return False, "changed since a worker last opened its key; waiting for a new check"
    return finding.ok, finding.detail
