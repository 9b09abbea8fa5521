"""Every setting without a usable default is set in every target (or is optional, with why)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_settings import BaseSettings

from shared.settings import ENV_PREFIX, Settings
from tests.deploy.targets import (
    OVERLAYS,
    SECRET_KEYS_FILE,
    SYSTEMD_ENV_FILE,
    UNIT_FILE,
    compose,
    env_file_keys,
    esteira_services,
    rendered,
    unit_entries,
)

# Needed by a cluster: the store and Temporal are not embedded, and outside Development the
# SISBAJUD executor and gateway refuse to start without their credentials.
REQUIRED = {
    "ESTEIRA_API_KEY", "ESTEIRA_DATABASE_URL", "TEMPORAL_ADDRESS",
    # Outside Development Temporal payloads are encrypted, so a key is required.
    "ESTEIRA_PAYLOAD_CODEC__KEYS",
    "ESTEIRA_SISBAJUD__HUB_WEBHOOK_SECRETS", "ESTEIRA_SISBAJUD__MENSAGERIA_URL",
    "ESTEIRA_SISBAJUD__MENSAGERIA_CLIENT_ID", "ESTEIRA_SISBAJUD__MENSAGERIA_CLIENT_SECRET",
    # Has a default, but it is the dev ledger of the Midaz simulator.
    "ESTEIRA_SISBAJUD__INSTITUTIONS",
}
# One machine under systemd embeds Temporal and may keep the SQLite store.
EMBEDDED_ON_ONE_MACHINE = {"ESTEIRA_DATABASE_URL", "TEMPORAL_ADDRESS"}
OPTIONAL = {
    "ESTEIRA_STORAGE__ROOT": "derived from ESTEIRA_DATA_DIR",
    "ESTEIRA_STORAGE__INPUTS": "an implicit `inbox` folder",
    "ESTEIRA_SIGNING__PROFILES": "profiles are seeded once, then managed through the API",
    "ESTEIRA_SIGNING__ENCRYPTION_PASSPHRASE": "only for profiles that encrypt",
    "ESTEIRA_SIGNING__PKCS11_MODULES": "only for profiles that sign through a PKCS#11 token",
    "ESTEIRA_SIGNING__KEY_DIRECTORIES": "certs/ and pki/ under the data directory (every "
                                        "target mounts it) and under /etc/esteira",
    "ESTEIRA_NOTIFICATIONS__SMTP_HOST": "approval e-mails, only where approvals are used",
    "ESTEIRA_NOTIFICATIONS__SMTP_PORT": "approval e-mails, only where approvals are used",
    "ESTEIRA_NOTIFICATIONS__PUBLIC_URL": "approval e-mails, only where approvals are used",
    "ESTEIRA_SIGNER__URL": "only for LacunaSigner / SignerFolder profiles",
    "ESTEIRA_SIGNER__API_KEY": "only for LacunaSigner / SignerFolder profiles",
    "ESTEIRA_SIGNER__WEBHOOK_TOKEN": "only for LacunaSigner / SignerFolder profiles",
    "ESTEIRA_CLUSTER__INSTANCE_NAME": "derived from the host name",
    "ESTEIRA_LOGGING__DIRECTORY": "data/logs, or the image's /var/log/esteira",
    "TEMPORAL_TLS_CLIENT_CERT_PATH": "only for a Temporal cluster with mTLS",
    "TEMPORAL_TLS_CLIENT_KEY_PATH": "only for a Temporal cluster with mTLS",
    "TEMPORAL_TLS_SERVER_CA_CERT_PATH": "only for a Temporal cluster with mTLS",
    "TEMPORAL_TLS_SERVER_NAME": "only for a Temporal cluster with mTLS",
    "TEMPORAL_API_KEY": "only for Temporal Cloud or a cluster that authenticates API keys",
    "ESTEIRA_TEMPORAL_SERVER__MODE": "read by `esteira dev` only (the systemd target, whose "
                                     "env file sets it); Compose and Kubernetes run no supervisor",
    "ESTEIRA_PORTS__METRICS": "each process's ops port: compose and Kubernetes set it; "
                              "`esteira dev` shows every child on the API's /api/metrics",
    "ESTEIRA_PICKUP__TURNSTILE_URL": "only where turnstile controllers are integrated",
    "ESTEIRA_PICKUP__TURNSTILE_PASSWORD": "only where turnstile controllers are integrated",
    "ESTEIRA_PICKUP__MONITOR_TOKEN": "only for the pickup monitor screens",
    "ESTEIRA_PICKUP__NOTIFICATION_WEBHOOK_URL": "only where guardians are notified",
    "ESTEIRA_PICKUP__SCHOOL_KEYS": "only where a school's staff get a key of their own",
    "ESTEIRA_DASHBOARD__OPERATORS": "dashboard sign-in; the API key works without it",
    "ESTEIRA_DASHBOARD__SESSION_SECRET": "derived from the API key",
    "ESTEIRA_GRPC__TLS_CERT_FILE": "gRPC over TLS; plaintext behind a loopback port otherwise",
    "ESTEIRA_GRPC__TLS_KEY_FILE": "gRPC over TLS; plaintext behind a loopback port otherwise",
    "ESTEIRA_GRPC__TLS_CLIENT_CA_FILE": "only for mutual TLS on gRPC",
    "ESTEIRA_SISBAJUD__MENSAGERIA_TOKEN_URL": "defaults to the simulator's, the Mensageria URL "
                                              "+ the auth mode's path",
    "ESTEIRA_SISBAJUD__SYSTEMPLANE_DSN": "only where routes come from Lerian's Systemplane",
    "ESTEIRA_TEMPORAL_SERVER__DYNAMIC_CONFIG": "tuning of the embedded dev server over ours",
    "ESTEIRA_PAYLOAD_CODEC__KEY_FILE": "the keys setting is used; a file only in Development",
    "ESTEIRA_PAYLOAD_CODEC__CORS_ORIGINS": "only where operators decode in the Temporal UI",
    "ESTEIRA_DASHBOARD__TEMPORAL_UI_URL": "links to this host's embedded UI port otherwise",
    "ESTEIRA_NOTIFICATIONS__SMTP_USERNAME": "approval e-mails through a relay that wants AUTH",
    "ESTEIRA_NOTIFICATIONS__SMTP_PASSWORD": "approval e-mails through a relay that wants AUTH",
    "ESTEIRA_NOTIFICATIONS__SMTP_CA_FILE": "the system's trust store otherwise",
    "ESTEIRA_PICKUP__NOTIFICATION_WEBHOOK_SECRET": "only where guardians are notified",
    "ESTEIRA_PICKUP__GUARDIAN_PAGE_URL": "the guardian page's links; derived from "
                                         "ESTEIRA_NOTIFICATIONS__PUBLIC_URL or the API port",
    "ESTEIRA_READINESS__PROCESSES": "derived from the worker domains",
    "ESTEIRA_LOGGING__ACCESS_LOG": "on everywhere but Development",
    "OTEL_EXPORTER_OTLP_ENDPOINT": "traces are optional: off without an endpoint",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "traces are optional: off without an endpoint",
    "OTEL_EXPORTER_OTLP_HEADERS": "only for a collector that authenticates exports",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "only for a collector that authenticates exports",
    "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf, the only one supported",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf, the only one supported",
    "OTEL_SERVICE_NAME": "esteira-<process>",
}


def _leaves(model: type[BaseModel], prefix: str) -> Iterator[tuple[str, Any]]:
    """(environment name, default) of every leaf setting, nested models flattened by `__`."""
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseSettings):
            yield from _leaves(annotation, annotation.model_config.get("env_prefix", ""))
        elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield from _leaves(annotation, f"{prefix}{name.upper()}__")
        else:
            yield f"{prefix}{name.upper()}", field.get_default(call_default_factory=True)


def without_default() -> set[str]:
    """Settings whose default is nothing at all: None or an empty collection."""
    return {env for env, default in _leaves(Settings, ENV_PREFIX)
            if default is None or default == [] or default == {}}


def test_every_setting_without_a_default_is_classified():
    unclassified = without_default() - REQUIRED - set(OPTIONAL)
    assert not unclassified, (
        f"new settings without a default: {sorted(unclassified)}. Set them in every target "
        "(docker-compose.yml, k8s/, deploy/systemd/) and add them to REQUIRED, or add them "
        "to OPTIONAL with the reason they may stay unset.")
    assert not REQUIRED & set(OPTIONAL)


def test_the_walk_sees_nested_and_temporal_settings():
    found = without_default()
    assert {"ESTEIRA_API_KEY", "TEMPORAL_ADDRESS",
            "ESTEIRA_SISBAJUD__MENSAGERIA_CLIENT_SECRET"} <= found


def test_compose_sets_every_required_setting_in_every_service():
    for name, service in esteira_services(compose()).items():
        missing = REQUIRED - set(service["environment"])
        assert not missing, f"{name} lacks {sorted(missing)}"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_kubernetes_sets_every_required_setting_in_every_pod(overlay):
    docs = rendered(overlay)
    [config] = [d for d in docs if d["kind"] == "ConfigMap"]
    available = set(config["data"]) | env_file_keys(SECRET_KEYS_FILE)
    for doc in docs:
        if doc["kind"] in ("Deployment", "Job"):
            for container in doc["spec"]["template"]["spec"]["containers"]:
                own = {e["name"] for e in container.get("env", [])}
                missing = REQUIRED - available - own
                assert not missing, f"{doc['metadata']['name']} lacks {sorted(missing)}"


def test_systemd_documents_every_required_setting_in_its_environment_file():
    sections = unit_entries(UNIT_FILE)
    assert ("EnvironmentFile", "/etc/esteira/esteira.env") in sections["Service"]
    documented = env_file_keys(SYSTEMD_ENV_FILE, commented=True)
    missing = REQUIRED - EMBEDDED_ON_ONE_MACHINE - documented
    assert not missing, f"deploy/systemd/esteira.env.example lacks {sorted(missing)}"
    assert "ESTEIRA_API_KEY" in env_file_keys(SYSTEMD_ENV_FILE), "the API key is never optional"
