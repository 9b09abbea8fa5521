"""Creating and editing profiles: one folder per profile, one profile per folder, audited."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from sqlalchemy import func
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.operator.errors import refuse
from activities.signer.policy_config import policy_name_alias
from activities.signer.profiles import ProfileConfig, unlisted_module
from shared.contracts.signer import SignerErrorCode
from shared.db.models import OperationalEvent, utcnow
from shared.db.signer_models import SigningProfile
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


async def list_profiles(sessions: async_sessionmaker[AsyncSession]) -> list[SigningProfile]:
    """Every signing profile, by name."""
    async with sessions() as session:
        return list((await session.exec(
            select(SigningProfile).order_by(SigningProfile.name))).all())


async def get_profile(sessions: async_sessionmaker[AsyncSession],
                      name: str) -> SigningProfile | None:
    """One profile by name (None when there is none)."""
    async with sessions() as session:
        return await session.get(SigningProfile, name)


async def create_profile(sessions: async_sessionmaker[AsyncSession], settings: Settings,
                         data: dict[str, Any], *, actor: str) -> SigningProfile:
    """A new profile; its folder must be configured here and free."""
    try:
        config = ProfileConfig(**data)
    except ValidationError as exc:
        raise refuse(SignerErrorCode.PROFILE_INVALID, _problems(exc)) from None
    if (why := unlisted_module(config, settings)) is not None:
        raise refuse(SignerErrorCode.PROFILE_PKCS11_MODULE_NOT_ALLOWED, why + ".")
    folder = _configured_folder(settings, config.input_folder)
    async with sessions() as session:
        if await session.get(SigningProfile, config.name) is not None:
            raise refuse(SignerErrorCode.PROFILE_EXISTS, f"Profile {config.name} already exists.")
        await _refuse_taken(session, folder, config.name)
        row = SigningProfile(**config.model_dump(exclude={"policy", "input_folder"}),
                             policy=config.policy.model_dump() if config.policy else None,
                             input_folder=folder)
        _refuse_disabled_with_folder(row)
        session.add(row)
        session.add(OperationalEvent(
            domain="signer", type="ProfileCreated", actor=actor,
            message=f"Profile {row.name} created by {actor}. Input folder: {folder or '(none)'}.",
            properties={"profile": row.name, "inputFolder": folder}))
        await _commit(session, folder)
    return row


async def edit_profile(sessions: async_sessionmaker[AsyncSession], settings: Settings,
                       name: str, changes: dict[str, Any], *, actor: str) -> SigningProfile:
    """Change a profile's behaviour; folder refusals name the folder and its owner."""
    try:
        changes = policy_name_alias(changes)
    except ValueError as exc:
        raise refuse(SignerErrorCode.PROFILE_INVALID, str(exc)) from None
    unknown = set(changes) - EDITABLE
    if unknown:
        raise refuse(SignerErrorCode.PROFILE_INVALID,
                     f"Not editable here: {', '.join(sorted(unknown))}.")
    async with sessions() as session:
        row = await session.get(SigningProfile, name)
        if row is None:
            raise refuse(SignerErrorCode.PROFILE_NOT_FOUND, f"No signing profile named {name}.")
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
            properties={"profile": name, "changes": {k: _show(v) for k, v in changes.items()}}))
        await _commit(session, changes.get("input_folder"))
    return row


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
