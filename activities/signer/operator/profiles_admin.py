"""Signing profiles as operators see and change them: one folder per profile, one profile
per folder, audited; health as a worker found it (nothing is opened here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from sqlalchemy import func
from sqlalchemy.exc import IntegrityError
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.contracts.jobs import SignerErrorCode
from activities.signer.crypto.policy_catalogue import POLICY_NAMES
from activities.signer.health_reporter import recorded_health
from activities.signer.key_files import key_file_problem
from activities.signer.lacuna.health import folder_gone
from activities.signer.level_config import LEVELS, describe_level
from activities.signer.models.jobs import SigningProfile
from activities.signer.operator.errors import refuse
from activities.signer.policy_config import policy_name_alias
from activities.signer.profiles import ProfileConfig, is_keyless, unlisted_module
from activities.signer.signature_policy import describe_policy
from shared.db.engine import Sessions
from shared.db.models import OperationalEvent, utcnow
from shared.paging import Page, bounded, decode_cursor, encode_cursor
from shared.settings import Settings

# Fields an edit may change; certificates and names are set at creation.
EDITABLE = {"format", "verify", "validate_certificate", "encrypt", "enabled", "input_folder",
            "policy", "trust_roots", "approval", "check_cnab240_payment_dates",
            "policy_name", "policy_document", "policy_digest",
            # Lacuna Signer methods: rebinding a vanished Signer folder needs no restart.
            "method", "signer_flow", "signer_folder_id",
            # Levels: the level, its TSAs and the responders' timeout (a csc block is the
            # certificate: set at creation like a PFX path).
            "signature_level", "timestamp", "revocation_timeout_seconds"}
# JSON blocks stored as the validated model dumps them (defaults filled in).
_BLOCKS = ("timestamp",)


@dataclass(frozen=True)
class ProfileView:
    """A profile as doors show it: the row (never a secret, only where one comes from), the
    policy and level its signatures declare (TSAs by address only), and whether it is KEYLESS
    (its approvers sign)."""

    row: SigningProfile
    effective_policy: str
    keyless: bool
    effective_level: str

    @classmethod
    def of(cls, row: SigningProfile) -> ProfileView:
        """The view of a row."""
        return cls(row, describe_policy(row), is_keyless(row),
                   describe_level(row.signature_level, row.timestamp))


class SignerProfiles:
    """Profiles: read, create, edit, and their health as the workers recorded it."""

    # The catalogue's policy names and the signature levels, for a profile's pickers.
    policy_names = POLICY_NAMES
    levels = LEVELS

    def __init__(self, settings: Settings, sessions: Sessions) -> None:
        self._settings = settings
        self._sessions = sessions

    async def all(self) -> list[ProfileView]:
        """Every signing profile, by name."""
        async with self._sessions() as session:
            rows = (await session.exec(select(SigningProfile).order_by(SigningProfile.name))).all()
        return [ProfileView.of(row) for row in rows]

    async def page(self, *, limit: int = 100, cursor: str | None = None) -> Page[ProfileView]:
        """Profiles by name, a page at a time."""
        limit = bounded(limit)
        query = select(SigningProfile)
        if cursor:
            [last] = decode_cursor(cursor, str)
            query = query.where(SigningProfile.name > last)
        async with self._sessions() as session:
            rows = list((await session.exec(
                query.order_by(SigningProfile.name).limit(limit + 1))).all())
        items = [ProfileView.of(row) for row in rows[:limit]]
        return Page(items, encode_cursor(items[-1].row.name) if len(rows) > limit else None)

    async def find(self, name: str) -> ProfileView | None:
        """One profile by name (None when there is none)."""
        async with self._sessions() as session:
            row = await session.get(SigningProfile, name)
        return ProfileView.of(row) if row is not None else None

    async def get(self, name: str) -> ProfileView:
        """One profile by name, or profile.not-found."""
        view = await self.find(name)
        if view is None:
            raise refuse(SignerErrorCode.PROFILE_NOT_FOUND, f"No signing profile named {name}.")
        return view

    async def default(self) -> ProfileView | None:
        """The profile an upload that names none is signed with (`Signing:DefaultProfile`)."""
        return await self.find(self._settings.signing.default_profile)

    async def recorded_health(self, profile: SigningProfile) -> tuple[bool, str]:
        """What a worker last found when it opened this version of the profile's key."""
        return await recorded_health(profile, self._sessions)

    async def health(self, profile: SigningProfile) -> tuple[bool, str]:
        """A worker's last finding, failed too when the bound Signer folder is gone."""
        ok, detail = await recorded_health(profile, self._sessions)
        # Read on every call: binding another Signer folder clears it without a restart.
        if ok and (gone := await folder_gone(profile, self._sessions)):
            return False, gone
        return ok, detail

    async def create(self, data: dict[str, Any], *, actor: str) -> ProfileView:
        """A new profile; its folder must be configured here and free."""
        settings = self._settings
        try:
            config = ProfileConfig(**data)
        except ValidationError as exc:
            raise refuse(SignerErrorCode.PROFILE_INVALID, _problems(exc)) from None
        if (why := unlisted_module(config, settings)) is not None:
            raise refuse(SignerErrorCode.PROFILE_PKCS11_MODULE_NOT_ALLOWED, why + ".")
        if (why := key_file_problem(config, settings)) is not None:
            raise refuse(SignerErrorCode.PROFILE_INVALID, why)
        folder = _configured_folder(settings, config.input_folder)
        async with self._sessions() as session:
            if await session.get(SigningProfile, config.name) is not None:
                raise refuse(SignerErrorCode.PROFILE_EXISTS,
                             f"Profile {config.name} already exists.")
            await _refuse_taken(session, folder, config.name)
            row = SigningProfile(**config.model_dump(exclude={"policy", "input_folder"}),
                                 policy=config.policy.model_dump() if config.policy else None,
                                 input_folder=folder)
            _refuse_disabled_with_folder(row)
            session.add(row)
            session.add(OperationalEvent(
                domain="signer", type="ProfileCreated", actor=actor,
                message=f"Profile {row.name} created by {actor}. "
                        f"Input folder: {folder or '(none)'}.",
                properties={"profile": row.name, "inputFolder": folder}))
            await _commit(session, folder)
        return ProfileView.of(row)

    async def edit(self, name: str, changes: dict[str, Any], *, actor: str) -> ProfileView:
        """Change a profile's behaviour; folder refusals name the folder and its owner."""
        settings = self._settings
        try:
            changes = policy_name_alias(changes)
        except ValueError as exc:
            raise refuse(SignerErrorCode.PROFILE_INVALID, str(exc)) from None
        unknown = set(changes) - EDITABLE
        if unknown:
            raise refuse(SignerErrorCode.PROFILE_INVALID,
                         f"Not editable here: {', '.join(sorted(unknown))}.")
        async with self._sessions() as session:
            row = await session.get(SigningProfile, name)
            if row is None:
                raise refuse(SignerErrorCode.PROFILE_NOT_FOUND,
                             f"No signing profile named {name}.")
            before = {key: getattr(row, key) for key in changes}
            try:
                config = ProfileConfig(**{**_as_config(row), **changes})
            except ValidationError as exc:
                raise refuse(SignerErrorCode.PROFILE_INVALID, _problems(exc)) from None
            if config.enabled and (why := unlisted_module(config, settings)) is not None:
                raise refuse(SignerErrorCode.PROFILE_PKCS11_MODULE_NOT_ALLOWED, why + ".")
            for block in _BLOCKS:
                if block in changes:
                    value = getattr(config, block)
                    changes[block] = value.model_dump() if value is not None else None
            if "input_folder" in changes:
                changes["input_folder"] = _configured_folder(settings, changes["input_folder"])
                await _refuse_taken(session, changes["input_folder"], name)
            for key, value in changes.items():
                setattr(row, key, value)
            _refuse_disabled_with_folder(row)
            row.updated_at, row.version = utcnow(), row.version + 1
            session.add(row)
            diffs = [f"{_label(k)} {_show(before[k])} → {_show(changes[k])}"
                     for k in changes if before[k] != changes[k]]
            session.add(OperationalEvent(
                domain="signer", type="ProfileEdited", actor=actor,
                message=f"Profile {name} edited by {actor}: {'; '.join(diffs) or 'no change'}.",
                properties={"profile": name,
                            "changes": {k: _show(v) for k, v in changes.items()}}))
            await _commit(session, changes.get("input_folder"))
        return ProfileView.of(row)


def _as_config(row: SigningProfile) -> dict[str, Any]:
    return {key: getattr(row, key) for key in ProfileConfig.model_fields}


def _configured_folder(settings: Settings, folder: str | None) -> str | None:
    if not folder:
        return None
    for configured in settings.effective_inputs:
        if configured.name.lower() == folder.lower():
            return configured.name
    raise refuse(SignerErrorCode.PROFILE_FOLDER_NOT_CONFIGURED,
                 f"Folder {folder} is not configured on this host (Storage:Inputs[]).")


async def _refuse_taken(session: AsyncSession, folder: str | None, profile: str) -> None:
    if folder is None:
        return
    owner = (await session.exec(select(SigningProfile.name).where(
        func.lower(SigningProfile.input_folder) == folder.lower(),
        SigningProfile.name != profile))).first()
    if owner is not None:
        raise _taken(folder, owner)


def _refuse_disabled_with_folder(row: SigningProfile) -> None:
    if not row.enabled and row.input_folder:
        raise refuse(SignerErrorCode.PROFILE_FOLDER_STILL_ASSIGNED,
                     f"Profile {row.name} still has folder {row.input_folder}: clear the folder "
                     "in the same save to disable it, or its files would silently stop.")


async def _commit(session: AsyncSession, folder: str | None) -> None:
    try:
        await session.commit()
    except IntegrityError:
        # Two saves picked the same folder at once: the unique index kept exactly one owner.
        await session.rollback()
        owner = (await session.exec(select(SigningProfile.name).where(
            func.lower(SigningProfile.input_folder) == (folder or "").lower()))).first()
        raise _taken(folder or "?", owner or "another profile") from None


def _taken(folder: str, owner: str):
    return refuse(SignerErrorCode.PROFILE_FOLDER_TAKEN,
                  f"Folder {folder} is already used by profile {owner}; clear it there first "
                  "or choose another folder.")


def _label(key: str) -> str:
    return "InputFolder" if key == "input_folder" else key


def _show(value: Any) -> str:
    return "(none)" if value in (None, "") else str(value)


def _problems(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
