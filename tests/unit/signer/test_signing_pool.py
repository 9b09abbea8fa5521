"""The signing pool is started and warmed before the worker polls: no job pays for it."""

from __future__ import annotations

import sys

from sqlmodel import select

from activities.signer import engine
from activities.signer.models.jobs import SigningProfile
from activities.signer.profiles import certificate_spec
from activities.signer.signing_pool import signing_pool, start_all, warm_keys
from services.bootstrap import bootstrap
from shared.db.engine import create_engine, session_factory


def _warmed(cache_key: str) -> tuple[bool, bool]:
    """In a pool process: is the signing stack imported, is the profile's key open?"""
    return "activities.signer.crypto.verify" in sys.modules, cache_key in engine._SIGNERS


async def _profiles(settings) -> list[SigningProfile]:
    await bootstrap(settings)
    db = create_engine(settings.sqlalchemy_url)
    try:
        async with session_factory(db)() as session:
            return list((await session.exec(select(SigningProfile))).all())
    finally:
        await db.dispose()


async def test_each_pool_process_imports_the_stack_and_opens_the_keys_before_any_job(settings):
    profiles = await _profiles(settings)
    default = next(p for p in profiles if p.name == "default")
    pool = signing_pool(1, None, profiles)
    try:
        await start_all(pool, 1)
        assert pool.submit(_warmed, certificate_spec(default).cache_key).result(60) == (True, True)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


async def test_only_enabled_local_pfx_profiles_are_opened_ahead(settings):
    default = next(p for p in await _profiles(settings) if p.name == "default")
    variants = [default.model_copy(update=change) for change in (
        {"enabled": False}, {"cert_source": "pkcs11"}, {"method": "LacunaSigner"})]
    assert [s.cache_key for s in warm_keys([default, *variants])] == \
        [certificate_spec(default).cache_key]
