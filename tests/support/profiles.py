"""Read and change stored signing profiles directly, for tests that set up a boot."""

from __future__ import annotations

from typing import Any

from sqlmodel import select

from activities.signer.models.jobs import SigningProfile
from shared.db.engine import create_engine, session_factory
from shared.settings import Settings


async def profile_folders(settings: Settings) -> dict[str, str | None]:
    """Each stored profile's bound input folder, read through a fresh engine."""
    engine = create_engine(settings.sqlalchemy_url)
    try:
        async with session_factory(engine)() as session:
            return {p.name: p.input_folder
                    for p in (await session.exec(select(SigningProfile))).all()}
    finally:
        await engine.dispose()


async def update_default_profile(owner: Any, **fields: Any) -> None:
    """Set fields on the stored `default` profile and bump its version (`owner.sessions()`)."""
    async with owner.sessions() as session:
        row = await session.get(SigningProfile, "default")
        for key, value in fields.items():
            setattr(row, key, value)
        row.version += 1
        session.add(row)
        await session.commit()
