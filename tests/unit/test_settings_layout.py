"""Settings: the shared sections in `shared.settings.core`, each domain's in its home
(`activities.<domain>.settings`), every name importable from `shared.settings`."""

from __future__ import annotations

import importlib

import shared.settings as settings
from activities.sisbajud.contracts.names import TASK_QUEUE as SISBAJUD_QUEUE
from shared.contracts import dev_credentials

HOMES = {
    "shared.settings.core": [
        "PortSettings", "LogSettings", "ClusterSettings", "TemporalSettings",
        "TemporalServerSettings", "ReadinessSettings", "GrpcSettings", "DashboardSettings",
        "OperatorAccount", "normalise_database_url", "ENV_PREFIX"],
    "shared.durations": ["seconds_of"],
    "activities.signer.settings": [
        "PipelineSettings", "StorageSettings", "InputFolderSettings", "SigningSettings",
        "SignerSettings", "UploadSettings", "NotificationSettings"],
    "activities.pickup.settings": ["PickupSettings"],
    "activities.sisbajud.settings": ["SisbajudSettings", "InstitutionSettings",
                                     "SEED_SISBAJUD_ENV"],
}


def test_each_section_lives_in_its_domain_module_and_is_re_exported():
    for module_name, names in HOMES.items():
        module = importlib.import_module(module_name)
        for name in names:
            assert getattr(settings, name) is getattr(module, name), name


def test_every_section_of_the_root_settings_has_a_home_module():
    homes = set(HOMES) | {"shared.settings"}
    for name, field in settings.Settings.model_fields.items():
        kind = field.annotation
        if isinstance(kind, type) and kind.__module__.endswith("settings"):
            assert kind.__module__ in homes, name


def test_the_development_client_comes_from_the_contract_the_simulators_share():
    assert settings.DEV_M2M_CLIENT_ID is dev_credentials.DEV_M2M_CLIENT_ID
    assert settings.DEV_M2M_CLIENT_SECRET is dev_credentials.DEV_M2M_CLIENT_SECRET
    assert settings.SisbajudSettings().m2m_subject == dev_credentials.DEV_M2M_SUBJECT


def test_the_task_queue_default_is_the_contract_constant():
    assert settings.SisbajudSettings().task_queue == SISBAJUD_QUEUE
