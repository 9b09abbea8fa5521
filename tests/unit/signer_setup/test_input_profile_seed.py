"""`Storage:Inputs[].Profile`: seed data on the first boot, reported ignored on every later one."""

from __future__ import annotations

import logging

from services.bootstrap import bootstrap
from services.dev.main import _banner
from shared.settings import Settings
from tests.support.profiles import profile_folders


def _configured(settings: Settings) -> Settings:
    return Settings(
        data_dir=settings.data_dir, database_url=settings.database_url,
        storage={"inputs": [{"name": "folha", "profile": "pagamentos"},
                            {"name": "notas", "profile": "fantasma"},
                            {"name": "extra"}]},
        signing={"profiles": [{"name": "pagamentos", "pfx_path": "/x.pfx"},
                              {"name": "avulso", "pfx_path": "/y.pfx"}]})


async def test_the_first_boot_binds_each_folder_to_the_profile_its_key_names(settings):
    configured = _configured(settings)
    warnings = await bootstrap(configured)
    assert await profile_folders(configured) == {"pagamentos": "folha", "avulso": None}
    # `extra` names no profile and gets the default, which this section doesn't declare.
    assert warnings == ["Folder 'notas' left unassigned: Storage:Inputs[1].Profile names "
                        "'fantasma', which is no seeded profile or already has a folder.",
                        "Folder 'extra' left unassigned: Storage:Inputs[2].Profile names "
                        "no profile and the default profile 'default' is no seeded profile or "
                        "already has a folder."]


async def test_later_boots_report_each_profile_key_ignored_in_the_log_and_banner(settings,
                                                                                caplog):
    configured = _configured(settings)
    await bootstrap(configured)
    configured.storage.inputs[2].profile = "avulso"  # an edit after the first boot binds nothing
    configured.readiness.worker_domains = []
    with caplog.at_level(logging.WARNING, logger="esteira.bootstrap"):
        warnings = await bootstrap(configured)
    ignored = [f"Storage:Inputs[{i}].Profile ({folder} -> {profile}) is ignored: profiles are "
               f"already in the operational store; a profile chooses its folder on its page "
               f"(/profiles/{profile})."
               for i, folder, profile in [(0, "folha", "pagamentos"), (1, "notas", "fantasma"),
                                          (2, "extra", "avulso")]]
    assert warnings[1:] == ignored
    assert warnings[0].startswith("Signing:Profiles[] is ignored")
    logged = [r.getMessage() for r in caplog.records if r.name == "esteira.bootstrap"]
    assert all(line in logged for line in ignored)
    banner = await _banner(configured, False, warnings)
    assert all(f"WARN {line}" in banner for line in ignored)
    folders = await profile_folders(configured)
    assert folders["avulso"] is None, "the file can't route a folder now"


async def test_a_later_boot_without_profile_keys_reports_nothing_ignored(settings):
    await bootstrap(settings)
    assert await bootstrap(settings) == []
