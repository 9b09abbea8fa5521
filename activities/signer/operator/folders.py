"""The configured input folders with the profile bound to each and its watcher's status."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from shared.db.signer_models import InputFolderState, SigningProfile
from shared.settings import Settings


@dataclass(frozen=True)
class FolderBinding:
    """One configured folder: where it is, who watches it for which profile, how it runs."""

    name: str
    path: Path
    owner: str | None
    state: InputFolderState | None


@dataclass(frozen=True)
class FolderOverview:
    """Every profile and every configured folder, read together."""

    profiles: list[SigningProfile]
    folders: list[FolderBinding]


async def folder_overview(sessions: async_sessionmaker[AsyncSession],
                          settings: Settings) -> FolderOverview:
    """Profiles and folders from one read of the store."""
    async with sessions() as session:
        profiles = list((await session.exec(select(SigningProfile))).all())
        states = {s.name: s for s in (await session.exec(select(InputFolderState))).all()}
    owners = {p.input_folder.lower(): p.name for p in profiles if p.input_folder}
    folders = [FolderBinding(f.name, settings.input_folder_path(f), owners.get(f.name.lower()),
                             states.get(f.name))
               for f in settings.effective_inputs]
    return FolderOverview(profiles, folders)


def unconfigured_folder(profile: SigningProfile, settings: Settings) -> str | None:
    """Why a profile's stored folder isn't watched here; None when configured or unbound."""
    folder = profile.input_folder
    if not folder or folder.lower() in {f.name.lower() for f in settings.effective_inputs}:
        return None
    # A stored binding is never revalidated at boot: the folder was renamed or removed from
    # the configuration after the profile chose it. The profile still serves uploads.
    return (f"profile {profile.name} is bound to folder {folder!r}, which this host does not "
            f"configure (Storage:Inputs[]): nothing is watched for it here and it still serves "
            f"uploads; choose another folder on /profiles/{profile.name}")
