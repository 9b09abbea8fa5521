"""Settings every process shares: ports, logging, cluster, Temporal, gRPC, dashboard, readiness."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from shared.web_urls import web_url

ENV_PREFIX = "ESTEIRA_"
CONFIG_FILE_ENV = "ESTEIRA_CONFIG_FILE"
# A Temporal dynamic config key: `service.settingName`, nothing the CLI could read as a flag.
DYNAMIC_CONFIG_KEY = re.compile(r"[a-z]+(\.[A-Za-z][A-Za-z0-9]*)+")


class ClusterSettings(BaseModel):
    """`Cluster:*` — identity and liveness of this instance among its siblings."""

    enabled: bool = False
    instance_name: str | None = None
    stale_after_seconds: int = Field(default=60, ge=5)


class LogSettings(BaseModel):
    """`Logging:*` — console and daily files."""

    level: str = "INFO"
    directory: Path | None = None
    file_size_limit_mb: int = Field(default=50, ge=1)
    retained_file_count: int = Field(default=14, ge=1)
    to_file: bool = True
    # `text`: the seed's line with properties at the end; `json`: one object per line (time,
    # level, logger, message and each bound key) for a log shipper.
    format: Literal["text", "json"] = "text"
    # One line per HTTP request to the REST API, dashboard and webhook gateway (method, path
    # with tokens masked, status, duration, client). None: on, except in Development, where
    # the jobs page's 2 s refresh would bury the console.
    access_log: bool | None = None

    @field_validator("level")
    @classmethod
    def _known_level(cls, level: str) -> str:
        level = level.upper()
        if level not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
            raise ValueError("must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL")
        return level


class PortSettings(BaseModel):
    """Every port a process of ours listens on; all settable so instances can sit side by side."""

    api: int = Field(default=8080, ge=0, le=65535)
    grpc: int = Field(default=50051, ge=0, le=65535)
    temporal: int = Field(default=7233, ge=0, le=65535)
    temporal_ui: int = Field(default=8233, ge=0, le=65535)
    webhook: int = Field(default=8090, ge=0, le=65535)
    midaz: int = Field(default=8091, ge=0, le=65535)
    mensageria: int = Field(default=8092, ge=0, le=65535)
    turnstile: int = Field(default=8093, ge=0, le=65535)
    # The local SMTP sink `esteira dev` runs for approval e-mails.
    smtp: int = Field(default=8025, ge=0, le=65535)
    lacuna: int = Field(default=8094, ge=0, le=65535)
    # A process's own ops port: /metrics, /livez, /readyz (services/ops_server.py). Off when
    # unset or 0: under `esteira dev` the API's /api/metrics already shows every child.
    metrics: int | None = Field(default=None, ge=0, le=65535)


class OperatorAccount(BaseModel):
    """One dashboard operator: a name and a `scrypt$…` password hash (never the password)."""

    name: str = Field(min_length=1, max_length=100)
    password_hash: SecretStr


class DemoSettings(BaseModel):
    """`Demo:*` — the first run's demo data (`esteira dev`, Development only, never elsewhere)."""

    # On by default in Development; ignored in every other environment.
    enabled: bool = True


class DashboardSettings(BaseModel):
    """`Dashboard:*` — the operator web UI served by the API process."""

    # Empty in Development: operator `operator` signs in with the API key as password.
    operators: list[OperatorAccount] = Field(default_factory=list)
    # None: derived from the API key, so every API process of a deployment agrees.
    session_secret: SecretStr | None = None
    session_minutes: int = Field(default=480, ge=1)
    # Cookies marked Secure (set behind TLS); plain http on loopback in development.
    secure_cookies: bool = False
    # This many wrong passwords in a row lock an operator name for `SignInLockoutSeconds`,
    # during which even the right password is refused (429 with Retry-After).
    sign_in_max_failures: int = Field(default=5, ge=1)
    sign_in_lockout_seconds: int = Field(default=300, ge=1)
    # The Temporal Web UI as operators' browsers reach it (a proxy, an ingress, Temporal
    # Cloud's `https://cloud.temporal.io`); None: the embedded UI's port on this host.
    temporal_ui_url: str | None = None

    @field_validator("temporal_ui_url")
    @classmethod
    def _web_ui_url(cls, value: str | None) -> str | None:
        return web_url(value)


class TemporalSettings(BaseSettings):
    """Temporal connection, read from the official `TEMPORAL_*` environment names."""

    model_config = SettingsConfigDict(env_prefix="TEMPORAL_", extra="ignore")

    address: str | None = None
    namespace: str = "default"
    # TEMPORAL_API_KEY (Temporal Cloud): sent as a bearer token, over TLS.
    api_key: SecretStr | None = None
    tls: bool = False
    tls_client_cert_path: Path | None = None
    tls_client_key_path: Path | None = None
    tls_server_ca_cert_path: Path | None = None
    tls_server_name: str | None = None


class TracingSettings(BaseSettings):
    """OpenTelemetry traces, read from the standard `OTEL_*` names; off without an endpoint."""

    model_config = SettingsConfigDict(env_prefix="OTEL_", extra="ignore")

    # OTLP over HTTP/protobuf: the traces URL as is, or the collector's base URL (the
    # exporter appends `/v1/traces`). Either one turns tracing on.
    exporter_otlp_traces_endpoint: str | None = None
    exporter_otlp_endpoint: str | None = None
    # `k=v,k2=v2` headers sent with each export (an API key of a hosted collector).
    exporter_otlp_traces_headers: SecretStr | None = None
    exporter_otlp_headers: SecretStr | None = None
    exporter_otlp_traces_protocol: str | None = None
    exporter_otlp_protocol: str | None = None
    # None: `esteira-<process>` (esteira-api, esteira-worker, ...).
    service_name: str | None = None
    sdk_disabled: bool = False

    @property
    def endpoint(self) -> str | None:
        """Where spans are sent, or None when tracing is off."""
        if self.sdk_disabled:
            return None
        if self.exporter_otlp_traces_endpoint:
            return self.exporter_otlp_traces_endpoint
        if self.exporter_otlp_endpoint:
            return self.exporter_otlp_endpoint.rstrip("/") + "/v1/traces"
        return None

    @property
    def protocol(self) -> str:
        """The OTLP transport asked for (the specification's default: http/protobuf)."""
        return (self.exporter_otlp_traces_protocol or self.exporter_otlp_protocol
                or "http/protobuf")

    @property
    def headers(self) -> str:
        """The export headers, traces-specific ones first."""
        chosen = self.exporter_otlp_traces_headers or self.exporter_otlp_headers
        return chosen.get_secret_value() if chosen is not None else ""


# --- Payload encryption (hardening: personal and financial data in Temporal) ---
class PayloadCodecSettings(BaseModel):
    """`PayloadCodec:*` — AES-256-GCM over every Temporal payload, keys by id."""

    # Off only on purpose (a cluster that encrypts elsewhere); outside Development keys are
    # then required, in Development `esteira dev` generates `KeyFile`.
    enabled: bool = True
    # `id:base64key` entries (32-byte keys) separated by commas: every key decrypts, the last
    # one encrypts. Rotate by appending a new entry; drop an old one only when no open
    # workflow's history still needs it.
    keys: SecretStr | None = None
    # The same entries one per line; default `data/keys/temporal-payload.keys`.
    key_file: Path | None = None
    # Browser origins (the Temporal Web UI) allowed to call the codec endpoint; none in
    # Development means the embedded UI's own address.
    cors_origins: list[str] = Field(default_factory=list)
# --- end of the payload encryption block ---


# --- The embedded Temporal dev server of `esteira dev` (hardening: exposed control planes) ---
class TemporalServerSettings(BaseModel):
    """`TemporalServer:*` — the Temporal dev server `esteira dev` runs, which has no auth."""

    # `external`: the supervisor runs no Temporal and connects to TEMPORAL_ADDRESS (a cluster
    # or Temporal Cloud, through temporalio.envconfig). `embedded`: Temporal's dev server on
    # one SQLite file beside the data (one host, no HA; docs/deployment.md). Unset: embedded
    # in Development; any other environment must name its mode.
    mode: Literal["embedded", "external"] | None = None

    # Its frontend and Web UI accept anyone who reaches them: loopback unless opened on purpose.
    bind_host: str = "127.0.0.1"
    # Terminate, cancel, signal, reset... from the Web UI: off unless asked for.
    ui_write_actions: bool = False
    # Server tuning (`--dynamic-config-value key=value`), over esteira's own defaults: e.g.
    # fewer queue reads per second spend less CPU on a small machine, at some latency.
    dynamic_config: dict[str, bool | int | float | str] = Field(default_factory=dict)

    @field_validator("dynamic_config")
    @classmethod
    def _dotted_keys(cls, value: dict[str, object]) -> dict[str, object]:
        bad = [key for key in value if not DYNAMIC_CONFIG_KEY.fullmatch(key)]
        if bad:
            raise ValueError(f"not a dynamic config key (like history.someSetting): {bad}")
        return value
# --- end of the embedded Temporal dev server block ---


# --- Readiness (hardening: a worker polling is part of being ready) ---
WorkerDomain = Literal["signer", "pickup", "sisbajud", "ops"]
DEFAULT_WORKER_DOMAINS: tuple[WorkerDomain, ...] = ("signer", "pickup", "sisbajud")


class ReadinessSettings(BaseModel):
    """`Readiness:*` — what /api/ready, the banner and `esteira status` require."""

    # Domains whose task queues must have a live polling worker; [] requires none.
    worker_domains: list[WorkerDomain] = Field(
        default_factory=lambda: list(DEFAULT_WORKER_DOMAINS))
    # A worker process silent this long is taken for dead, although Temporal keeps listing
    # its pollers for about a minute.
    poller_stale_seconds: float = Field(default=15.0, ge=1)
    # Processes that must be running and beating (a `process:<role>` line each); None: the
    # watcher with the signer, the webhook gateway with SISBAJUD, gRPC with any domain.
    processes: list[Literal["watcher", "grpc", "webhook"]] | None = None
# --- end of the readiness block ---


# --- gRPC transport security (hardening: exposed control planes) ---
class GrpcSettings(BaseModel):
    """`Grpc:*` — TLS for the gRPC server; without a certificate it serves plaintext."""

    # PEM server certificate (chain) and its private key: set both to serve TLS only.
    tls_cert_file: Path | None = None
    tls_key_file: Path | None = None
    # PEM CA bundle: when set, clients must present a certificate it issued (mutual TLS).
    tls_client_ca_file: Path | None = None

    @model_validator(mode="after")
    def _complete(self) -> GrpcSettings:
        if (self.tls_cert_file is None) != (self.tls_key_file is None):
            raise ValueError("ESTEIRA_GRPC__TLS_CERT_FILE and ESTEIRA_GRPC__TLS_KEY_FILE go "
                             "together: set both or neither")
        if self.tls_client_ca_file is not None and self.tls_cert_file is None:
            raise ValueError("ESTEIRA_GRPC__TLS_CLIENT_CA_FILE needs the server's "
                             "ESTEIRA_GRPC__TLS_CERT_FILE and ESTEIRA_GRPC__TLS_KEY_FILE")
        return self

    @property
    def tls(self) -> bool:
        """Whether the server serves TLS."""
        return self.tls_cert_file is not None
# --- end of the gRPC transport security block ---


def normalise_database_url(url: str) -> str:
    """Pick the async driver for plain `postgresql://` and `sqlite://` URLs."""
    for plain, driver in (
        ("postgresql://", "postgresql+asyncpg://"),
        ("postgres://", "postgresql+asyncpg://"),
        ("sqlite://", "sqlite+aiosqlite://"),
    ):
        if url.startswith(plain):
            return driver + url[len(plain) :]
    return url
