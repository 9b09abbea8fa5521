"""Signing profiles: first-boot seeding, later boots, folder binding refusals, formats."""

from __future__ import annotations

import contextlib
import logging

import pytest
from sqlmodel import select

from activities.signer.contracts.jobs import SignatureFormat
from activities.signer.models.jobs import SigningProfile
from activities.signer.profiles import (
    NO_PROFILE_WARNING,
    format_for,
    output_name,
    parse_profiles,
    seed_profiles,
)
from activities.signer.worker import max_concurrency
from services.bootstrap import bootstrap
from shared.db.engine import create_engine, session_factory
from shared.settings import ConfigurationError, Settings
from shared.worker_shape import WorkerDeps


async def _profiles(settings: Settings) -> list[SigningProfile]:
    engine = create_engine(settings.sqlalchemy_url)
    try:
        async with session_factory(engine)() as session:
            return list((await session.exec(select(SigningProfile).order_by(
                SigningProfile.name))).all())
    finally:
        await engine.dispose()


async def test_first_boot_without_configuration_binds_inbox_to_a_dev_default(settings):
    warnings = await bootstrap(settings)
    [profile] = await _profiles(settings)
    assert (profile.name, profile.input_folder, profile.format) == ("default", "inbox", "auto")
    assert profile.is_dev and warnings == []
    assert (settings.storage_root / "input" / "inbox").is_dir()
    assert (settings.data_dir / "pki" / "signer.pfx").exists()


async def test_configured_profiles_are_seeded_once_and_ignored_afterwards(settings, tmp_path):
    configured = Settings(
        data_dir=settings.data_dir, database_url=settings.database_url,
        storage={"inputs": [{"name": "folha"}, {"name": "notas"}]},
        signing={"profiles": [
            {"name": "pagamentos", "format": "cades", "pfx_path": "/x.pfx",
             "input_folder": "folha"},
            {"name": "copia", "pfx_path": "/y.pfx", "input_folder": "folha"},
            {"name": "fantasma", "pfx_path": "/z.pfx", "input_folder": "nao-existe"},
        ]})
    warnings = await bootstrap(configured)
    by_name = {p.name: p for p in await _profiles(configured)}
    assert by_name["pagamentos"].input_folder == "folha"
    assert by_name["copia"].input_folder is None, "one profile per folder"
    assert by_name["fantasma"].input_folder is None, "a folder this host doesn't configure"
    assert any("already taken" in w for w in warnings)
    assert any("not configured in Storage:Inputs[]" in w for w in warnings)
    again = await bootstrap(configured)
    assert again == ["Signing:Profiles[] is ignored: the operational store already has "
                     "profiles (edit them through the API)."]
    assert len(await _profiles(configured)) == 3


def test_an_invalid_profile_names_its_entry_and_key():
    with pytest.raises(ConfigurationError) as refused:
        parse_profiles([{"name": "ok"}, {"name": "bad", "format": "pdf"}])
    assert "ESTEIRA_SIGNING__PROFILES[1]" in str(refused.value)
    assert "format" in str(refused.value)


@pytest.mark.parametrize(("profile_format", "name", "expected", "output"), [
    ("auto", "doc.PDF", SignatureFormat.PADES, "doc.signed.PDF"),
    ("auto", "nota.xml", SignatureFormat.XADES, "nota.signed.xml"),
    ("auto", "folha.rem", SignatureFormat.CADES, "folha.rem.p7m"),
    ("cades", "doc.pdf", SignatureFormat.CADES, "doc.pdf.p7m"),
])
def test_format_by_profile_or_extension_and_output_names(profile_format, name, expected, output):
    fmt = format_for(profile_format, name)
    assert fmt is expected
    assert output_name(fmt, name, encrypted=False) == output
    assert output_name(fmt, name, encrypted=True) == output + ".enc"


async def test_a_pkcs11_profile_forces_one_job_at_a_time(settings, caplog):
    settings.pipeline.max_concurrency = 4
    engine = create_engine(settings.sqlalchemy_url)
    sessions = session_factory(engine)
    await seed_profiles(sessions, settings)
    async with sessions() as session:
        session.add(SigningProfile(name="token", cert_source="pkcs11", pkcs11_module="/m.so"))
        await session.commit()
    deps = WorkerDeps(settings, sessions, "t", contextlib.AsyncExitStack())
    with caplog.at_level(logging.WARNING):
        assert await max_concurrency(deps) == 1
    assert "PKCS#11" in caplog.text
    await engine.dispose()


async def test_production_never_generates_a_dev_certificate_or_profile(settings, tmp_path):
    production = Settings(environment="Production", data_dir=tmp_path / "prod",
                          database_url=settings.database_url)
    warnings = await bootstrap(production)
    assert await _profiles(production) == []
    assert not (production.data_dir / "pki").exists()
    assert warnings == [NO_PROFILE_WARNING]


async def test_a_configured_pkcs11_module_must_be_in_the_allow_list(settings):
    token = {"name": "hsm", "cert_source": "pkcs11", "pkcs11_module": "/opt/hsm/lib.so"}
    unlisted = Settings(data_dir=settings.data_dir, database_url=settings.database_url,
                        signing={"profiles": [token]})
    with pytest.raises(ConfigurationError, match="ESTEIRA_SIGNING__PKCS11_MODULES"):
        await bootstrap(unlisted)
    assert await _profiles(unlisted) == []
    listed = Settings(data_dir=settings.data_dir, database_url=settings.database_url,
                      signing={"profiles": [token], "pkcs11_modules": ["/opt/hsm/lib.so"]})
    await bootstrap(listed)
    assert [p.name for p in await _profiles(listed)] == ["hsm"]
