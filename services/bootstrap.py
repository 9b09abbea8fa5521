"""Bootstrap before services start: migrations, the signer's profiles and storage folders."""

from __future__ import annotations

import asyncio
import logging

from activities.signer.operator.setup import prepare_storage, seed_profiles
from shared.db import migrate
from shared.db.engine import create_engine, session_factory
from shared.settings import Settings

log = logging.getLogger("esteira.bootstrap")


async def bootstrap(settings: Settings) -> list[str]:
    """Migrate, seed profiles on first boot, create default folders; return warnings."""
    await asyncio.to_thread(migrate.upgrade, settings.sqlalchemy_url)
    log.info("Migrations applied (heads %s)", ", ".join(sorted(migrate.head_revisions())))
    prepare_storage(settings)
    for folder in settings.effective_inputs:
        # Only folders under our own storage root are ours to create; a missing explicit
        # path is a mount problem readiness must show, not something to paper over.
        if folder.path is None:
            settings.input_folder_path(folder).mkdir(parents=True, exist_ok=True)
    engine = create_engine(settings.sqlalchemy_url)
    try:
        warnings = await seed_profiles(session_factory(engine), settings)
    finally:
        await engine.dispose()
    for warning in warnings:
        log.warning("%s", warning)
    return warnings
