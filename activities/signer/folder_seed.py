"""`Storage:Inputs[].Profile` as seed data: read on the first boot only, reported ignored later."""

from __future__ import annotations

from shared.settings import Settings


def folders_by_profile(settings: Settings) -> dict[str, str]:
    """Profile name (lower case) -> the first folder whose `Profile` key names it."""
    chosen: dict[str, str] = {}
    for folder in settings.storage.inputs:
        if folder.profile:
            chosen.setdefault(folder.profile.lower(), folder.name)
    return chosen


def default_folder(settings: Settings, taken: set[str]) -> str | None:
    """The default profile's folder on the first boot: the first free one naming no profile."""
    return next((folder.name for folder in settings.storage.inputs
                 if not folder.profile and folder.name.lower() not in taken), None)


def unbound_input_keys(settings: Settings, bound: set[str]) -> list[str]:
    """One warning per folder the first boot's seed could not bind to a profile."""
    default = settings.signing.default_profile
    return [f"Folder {folder.name!r} left unassigned: Storage:Inputs[{index}].Profile names "
            + (f"{folder.profile!r}, which" if folder.profile else
               f"no profile and the default profile {default!r}")
            + " is no seeded profile or already has a folder."
            for index, folder in enumerate(settings.storage.inputs)
            if folder.name.lower() not in bound]


def ignored_input_keys(settings: Settings) -> list[str]:
    """One line per folder still carrying a `Profile` key on a boot after the first."""
    return [f"Storage:Inputs[{index}].Profile ({folder.name} -> {folder.profile}) is ignored: "
            f"profiles are already in the operational store; a profile chooses its folder on "
            f"its page (/profiles/{folder.profile})."
            for index, folder in enumerate(settings.storage.inputs) if folder.profile]
