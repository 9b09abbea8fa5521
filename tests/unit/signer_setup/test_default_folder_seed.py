"""First boot: a `Storage:Inputs[]` entry naming no profile is the default profile's folder."""

from __future__ import annotations

from services.bootstrap import bootstrap
from shared.settings import Settings
from tests.support.profiles import profile_folders


def _configured(settings: Settings, inputs: list[dict]) -> Settings:
    return Settings(
        data_dir=settings.data_dir, database_url=settings.database_url,
        storage={"inputs": inputs},
        signing={"profiles": [{"name": "pagamentos", "pfx_path": "/x.pfx"},
                              {"name": "default", "pfx_path": "/y.pfx"}]})


async def test_the_first_folder_naming_no_profile_gets_the_default_the_next_waits(settings):
    configured = _configured(settings, [{"name": "folha", "profile": "pagamentos"},
                                        {"name": "remessas"}, {"name": "arquivo"}])
    warnings = await bootstrap(configured)
    assert await profile_folders(configured) == {"pagamentos": "folha", "default": "remessas"}
    assert warnings == ["Folder 'arquivo' left unassigned: Storage:Inputs[2].Profile names no "
                        "profile and the default profile 'default' is no seeded profile or "
                        "already has a folder."], "one folder per profile"


async def test_a_folder_naming_the_default_wins_over_one_naming_none(settings):
    configured = _configured(settings, [{"name": "remessas"},
                                        {"name": "folha", "profile": "default"}])
    warnings = await bootstrap(configured)
    assert await profile_folders(configured) == {"pagamentos": None, "default": "folha"}
    assert [w.split(":")[0] for w in warnings] == ["Folder 'remessas' left unassigned"]


async def test_a_later_boot_never_binds_a_folder_to_the_default(settings):
    first = _configured(settings, [{"name": "folha", "profile": "pagamentos"}])
    await bootstrap(first)
    later = _configured(settings, [{"name": "folha", "profile": "pagamentos"},
                                   {"name": "remessas"}])
    later.readiness.worker_domains = []
    await bootstrap(later)
    assert await profile_folders(later) == {"pagamentos": "folha", "default": None}


async def test_a_development_default_takes_the_configured_folder_naming_no_profile(settings):
    configured = Settings(data_dir=settings.data_dir, database_url=settings.database_url,
                          storage={"inputs": [{"name": "remessas"}]})
    assert await bootstrap(configured) == []
    assert await profile_folders(configured) == {"default": "remessas"}
