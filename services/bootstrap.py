"""Bootstrap before services start: migrations, the signer's profiles and storage folders."""

from __future__ import annotations

import asyncio
import logging

from services.composition import compose
from shared.db import migrate
from shared.db.engine import create_engine, session_factory
from shared.settings import Settings
from shared.temporal import TemporalHandle

log = logging.getLogger("esteira.bootstrap")


async def bootstrap(settings: Settings) -> list[str]:
    """Migrate, seed profiles on first boot, create default folders; return warnings."""
    await asyncio.to_thread(migrate.upgrade, settings.sqlalchemy_url)
    log.info("Migrations applied (heads %s)", ", ".join(sorted(migrate.head_revisions())))
    engine = create_engine(settings.sqlalchemy_url)
    try:
        # Nothing here talks to Temporal: the handle never connects.
        signer = compose(settings, session_factory(engine),
                         TemporalHandle.for_settings(settings)).signer
        signer.setup.prepare_storage()
        warnings = await signer.setup.seed_profiles()
    finally:
        await engine.dispose()
    for warning in warnings:
        log.warning("%s", warning)
    return warnings
