"""Esteira's configuration: environment variables, an optional config file, seed-like keys."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

ENV_PREFIX = "ESTEIRA_"
CONFIG_FILE_ENV = "ESTEIRA_CONFIG_FILE"


class PipelineSettings(BaseModel):
    """`Pipeline:*` — how the signing pipeline claims and runs jobs."""

    max_concurrency: int = Field(default=4, ge=1, le=256)
    poll_interval_seconds: float = Field(default=2.0, gt=0)
    reject_already_processed_file_names: bool = True
    # A file is a candidate once its size and mtime stayed the same for this long.
    stability_window_seconds: float = Field(default=1.0, ge=0)
    max_consecutive_enqueue_failures: int = Field(default=10, ge=1)
    # How often an unreadable or locked input is tried again before it is reported.
    input_read_attempts: int = Field(default=3, ge=1)
    # A worker silent this long is taken for lost; its job is then requeued or failed safely.
    heartbeat_timeout_seconds: float = Field(default=30.0, ge=1)
    # Appended to the signer's task queue names, so deployments can share a namespace.
    task_queue_suffix: str = Field(default="", pattern=r"^[A-Za-z0-9._-]*$")


class InputFolderSettings(BaseModel):
    """One `Storage:Inputs[]` entry: a watched input folder."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    path: Path | None = None
    polling_interval_seconds: float | None = Field(default=None, gt=0)
    ignore: list[str] = Field(default_factory=list)


class StorageSettings(BaseModel):
    """`Storage:*` — where inputs, staging, outputs and errors live."""

    root: Path | None = None
    inputs: list[InputFolderSettings] = Field(default_factory=list)

    @field_validator("inputs")
    @classmethod
    def _unique_names(cls, inputs: list[InputFolderSettings]) -> list[InputFolderSettings]:
        names = [i.name.lower() for i in inputs]
        duplicated = sorted({n for n in names if names.count(n) > 1})
        if duplicated:
            raise ValueError(f"input folder names must be unique: {', '.join(duplicated)}")
        return inputs


class SigningSettings(BaseModel):
    """`Signing:*` — profiles seeded into the operational store on the first boot."""

    profiles: list[dict[str, Any]] = Field(default_factory=list)
    policy: str = "ICP-Brasil AD-RB (PAdES + CAdES + XAdES)"
    default_profile: str = "default"
    # BSENC v1 passphrase for profiles that encrypt; the salt lives in data/keys/.
    encryption_passphrase: SecretStr | None = None
    # The only PKCS#11 modules a profile may name (absolute paths): code to load comes from
    # deployment configuration, never from an API request.
    pkcs11_modules: list[str] = Field(default_factory=list)

    @field_validator("pkcs11_modules")
    @classmethod
    def _absolute(cls, modules: list[str]) -> list[str]:
        relative = [m for m in modules if not Path(m).is_absolute()]
        if relative:
            raise ValueError(f"must be absolute paths: {', '.join(relative)}")
        return modules


class SignerSettings(BaseModel):
    """`Signer:*` — the Lacuna Signer that LacunaSigner and SignerFolder profiles talk to."""

    # None: the Lacuna Signer simulator of `esteira dev` (http://<host>:<ports.lacuna>).
    url: str | None = None
    api_key: SecretStr | None = None
    poll_interval_seconds: float = Field(default=30.0, gt=0)
    request_timeout_seconds: float = Field(default=10.0, gt=0)
    # The Signer's webhook URL carries this token (its Integration page takes a bare URL).
    webhook_token: SecretStr | None = None
    # How long a dispatched document may wait for its participants before the job fails.
    max_wait_seconds: float = Field(default=30 * 24 * 3600.0, gt=0)
    folder_scan_interval_seconds: float = Field(default=30.0, gt=0)

    @property
    def configured(self) -> bool:
        """Both the Signer's address and its API key are set."""
        return bool(self.url) and self.api_key is not None


class UploadSettings(BaseModel):
    """`Upload:*` — the `POST /api/files` door."""

    enabled: bool = True
    max_bytes: int = Field(default=200 * 1024 * 1024, ge=1)


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


class PickupSettings(BaseModel):
    """`Pickup:*` — durations, cadences and the turnstile controller of the pickup board."""

    # The seed's IONCLASS_READY_TIMEOUT_MINUTES (also read under that name).
    ready_timeout_minutes: float = Field(default=60.0, gt=0)
    # Default for new schools; each school carries its own arrival-signal timeout.
    arrival_timeout_minutes: float = Field(default=15.0, gt=0)
    token_ttl_hours: float = Field(default=24.0 * 30, gt=0)
    token_prune_after_hours: float = Field(default=24.0, ge=0)
    schedules_enabled: bool = True
    timers_enabled: bool = True
    authorization_sweep_minutes: float = Field(default=60.0, gt=0)
    early_release_sweep_minutes: float = Field(default=60.0, gt=0)
    arrival_sweep_minutes: float = Field(default=1.0, gt=0)
    ready_sweep_minutes: float = Field(default=5.0, gt=0)
    token_sweep_hours: float = Field(default=24.0, gt=0)
    queue_snapshot_minutes: float = Field(default=5.0, gt=0)
    link_sweep_time_zone: str = "America/Sao_Paulo"
    sweep_batch_size: int = Field(default=500, ge=1, le=10_000)
    sse_poll_seconds: float = Field(default=1.0, gt=0)
    sse_keepalive_seconds: float = Field(default=15.0, gt=0)
    turnstile_url: str | None = None
    turnstile_login: str = "admin"
    turnstile_password: SecretStr | None = None
    turnstile_timeout_seconds: float = Field(default=5.0, gt=0)
    monitor_token: SecretStr | None = None
    ledger_retry_initial_seconds: float = Field(default=1.0, gt=0)
    ledger_retry_max_seconds: float = Field(default=60.0, gt=0)
    notification_webhook_url: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _seed_ready_timeout(cls, data: Any) -> Any:
        seed_value = os.environ.get("IONCLASS_READY_TIMEOUT_MINUTES")
        if seed_value and isinstance(data, dict) and "ready_timeout_minutes" not in data:
            data = {**data, "ready_timeout_minutes": seed_value}
        return data


# Ids of the ledger the Midaz simulator bootstraps for `esteira dev` (its default institution).
DEV_MIDAZ_ORGANIZATION_ID = "0190a000-0000-7000-8000-00000000e5e1"
DEV_MIDAZ_LEDGER_ID = "0190a000-0000-7000-8000-00000000e5e2"
# The OAuth client the `esteira dev` simulators register and the executor uses there when no
# client credentials are configured (Development only; `check_credentials` refuses elsewhere).
DEV_M2M_CLIENT_ID = "esteira-dev"
DEV_M2M_CLIENT_SECRET = "esteira-dev-client-secret"
DEV_M2M_SUBJECT = "esteira-executor"
# The seed's environment names, read beside `ESTEIRA_SISBAJUD__*` (which wins): setting <- name.
SEED_SISBAJUD_ENV = {
    "tick_every_seconds": "EXECUTOR_TICK_EVERY",
    "heartbeat_every_seconds": "EXECUTOR_HEARTBEAT_EVERY",
    "human_decision_after_beats": "EXECUTOR_HUMAN_DECISION_AFTER_BEATS",
    "response_deadline_margin_seconds": "RESPONSE_DEADLINE_MARGIN",
    "orphan_reconcile_window_seconds": "EXECUTOR_ORPHAN_RECONCILE_WINDOW",
    "hub_webhook_max_skew_seconds": "EXECUTOR_HUB_WEBHOOK_MAX_SKEW_SEC",
    "m2m_subject": "EXECUTOR_M2M_SUBJECT",
    "systemplane_enabled": "SYSTEMPLANE_ENABLED",
}
# Go-style durations as the seed writes them (`30s`, `48h`, `1h30m`); a bare number is seconds.
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_DURATION_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def seconds_of(text: str) -> float:
    """`30s` -> 30.0, `1h30m` -> 5400.0, `45` -> 45.0 (ValueError for anything else)."""
    text = text.strip()
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        return float(text)
    if not text or _DURATION_PART.sub("", text):
        raise ValueError(f"not a duration: {text!r}")
    return sum(float(n) * _DURATION_UNIT[unit] for n, unit in _DURATION_PART.findall(text))


class InstitutionSettings(BaseModel):
    """One institution the SISBAJUD executor writes for: its Midaz ledger and CRM."""

    id: str = Field(min_length=1, max_length=100)
    # None: the Midaz simulator of `esteira dev` (http://<host>:<ports.midaz>).
    base_url: str | None = None
    # OAuth 2.0 client credentials for this Midaz; the token endpoint defaults to
    # `{base_url}/oauth/token`. None in Development: the simulator's dev client.
    token_url: str | None = None
    client_id: str | None = None
    client_secret: SecretStr | None = None
    organization_id: str
    ledger_id: str
    crm_mode: str = Field(default="embedded", pattern="^(legacy|embedded)$")
    crm_base_url: str | None = None
    # Embedded CRM route: the seed's `/v2/organizations/{org}/instruments`; Midaz 4 serves `/v1`.
    crm_embedded_version: Literal["v1", "v2"] = "v2"
    # Block account lookup: the seed's `accounts?alias=` (a prefix match, filtered to the exact
    # alias here) or Midaz's exact route `accounts/alias/{alias}`.
    alias_lookup: Literal["query", "exact"] = "query"
    # Ledger `metadata` key under which Midaz reports the institution's owner (an M2M subject).
    owner_metadata_key: str = Field(default="sisbajudOwner", min_length=1)
    asset_code: str = "BRL"
    # Midaz has no salary flag: CRM `bankingDetails.type` values that mean "conta salário".
    salary_account_types: list[str] = Field(default_factory=lambda: ["SLRY"])


def _dev_institutions() -> list[InstitutionSettings]:
    return [InstitutionSettings(id="SIMBANK", organization_id=DEV_MIDAZ_ORGANIZATION_ID,
                                ledger_id=DEV_MIDAZ_LEDGER_ID)]


class SisbajudSettings(BaseModel):
    """`Sisbajud:*` — the court-order executor (the seed's `EXECUTOR_*`, see the README)."""

    tick_every_seconds: float = Field(default=30.0, gt=0)
    heartbeat_every_seconds: float = Field(default=300.0, gt=0)
    human_decision_after_beats: int = Field(default=3, ge=1)
    # An order's run continues as new past this many history events (Temporal warns at 10k).
    continue_as_new_after_events: int = Field(default=5_000, ge=10, le=40_000)
    response_deadline_margin_seconds: float = Field(default=3600.0, ge=0)
    orphan_reconcile_window_seconds: float = Field(default=48 * 3600.0, gt=0)
    # Each tick reads the block accounts written since its last cursor (and this much before
    # it: writes committed while that tick ran) plus the next this-many of all block accounts,
    # a sweep that reads each one over the window once every N / per_tick ticks.
    orphan_scan_overlap_seconds: float = Field(default=60.0, ge=0)
    orphan_sweep_accounts_per_tick: int = Field(default=50, ge=1)
    hub_webhook_max_skew_seconds: int = Field(default=300, ge=0)
    # Standard Webhooks secrets (`whsec_…`), several during a rotation; `esteira dev`
    # generates one into data/hub-webhook-secret when none is set.
    hub_webhook_secrets: list[SecretStr] = Field(default_factory=list)
    # The seed's EXECUTOR_M2M_SUBJECT, shown by the API; ownership compares the subject of the
    # token each institution's Midaz issued us, not this string.
    m2m_subject: str = Field(default=DEV_M2M_SUBJECT, min_length=1)
    systemplane_enabled: bool = False
    # None: the Mensageria simulator of `esteira dev` (http://<host>:<ports.mensageria>).
    mensageria_url: str | None = None
    # OAuth 2.0 client credentials for the Mensageria (token endpoint: `{url}/oauth/token`).
    mensageria_token_url: str | None = None
    mensageria_client_id: str | None = None
    mensageria_client_secret: SecretStr | None = None
    # A cached token is renewed this long before it expires (Authlib's `leeway`).
    m2m_token_leeway_seconds: float = Field(default=60.0, ge=0)
    institutions: list[InstitutionSettings] = Field(default_factory=_dev_institutions)
    http_timeout_seconds: float = Field(default=15.0, gt=0)
    # The gateway's order fetch while the Hub waits on the delivery: past it, 503 and the
    # Hub redelivers (a hung Mensageria must not hold the Hub's connections).
    webhook_fetch_timeout_seconds: float = Field(default=5.0, gt=0)
    fetch_retry_initial_seconds: float = Field(default=1.0, gt=0)
    fetch_retry_max_seconds: float = Field(default=60.0, gt=0)
    write_heartbeat_timeout_seconds: float = Field(default=30.0, gt=0)
    parent_poll_seconds: float = Field(default=60.0, gt=0)
    parent_wait_max_seconds: float = Field(default=86400.0, gt=0)
    outbox_retry_initial_seconds: float = Field(default=5.0, gt=0)
    outbox_retry_max_seconds: float = Field(default=600.0, gt=0)
    batch_size: int = Field(default=200, ge=1, le=10_000)
    # Only to keep test runs apart; deployments use the contract's `sisbajud-v1`.
    task_queue: str = "sisbajud-v1"

    @model_validator(mode="before")
    @classmethod
    def _seed_environment(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        seeded = {name: os.environ[env] for name, env in SEED_SISBAJUD_ENV.items()
                  if os.environ.get(env) and name not in data}
        for name, value in seeded.items():
            if name.endswith("_seconds") and name != "hub_webhook_max_skew_seconds":
                seeded[name] = seconds_of(value)
        return {**data, **seeded}


class OperatorAccount(BaseModel):
    """One dashboard operator: a name and a `scrypt$…` password hash (never the password)."""

    name: str = Field(min_length=1, max_length=100)
    password_hash: SecretStr


class DashboardSettings(BaseModel):
    """`Dashboard:*` — the operator web UI served by the API process."""

    # Empty in Development: operator `operator` signs in with the API key as password.
    operators: list[OperatorAccount] = Field(default_factory=list)
    # None: derived from the API key, so every API process of a deployment agrees.
    session_secret: SecretStr | None = None
    session_minutes: int = Field(default=480, ge=1)
    # Cookies marked Secure (set behind TLS); plain http on loopback in development.
    secure_cookies: bool = False


class NotificationSettings(BaseModel):
    """`Notifications:*` — the e-mails that ask approvers to decide."""

    # None: the SMTP sink of `esteira dev` on <host>:<ports.smtp>.
    smtp_host: str | None = None
    smtp_port: int | None = Field(default=None, ge=1, le=65535)
    from_address: str = "esteira@localhost"
    # The address approvers reach the API at; None: http://<host>:<ports.api>.
    public_url: str | None = None


class TemporalSettings(BaseSettings):
    """Temporal connection, read from the official `TEMPORAL_*` environment names."""

    model_config = SettingsConfigDict(env_prefix="TEMPORAL_", extra="ignore")

    address: str | None = None
    namespace: str = "default"
    tls: bool = False
    tls_client_cert_path: Path | None = None
    tls_client_key_path: Path | None = None
    tls_server_ca_cert_path: Path | None = None
    tls_server_name: str | None = None


# --- The embedded Temporal dev server of `esteira dev` (hardening: exposed control planes) ---
class TemporalServerSettings(BaseModel):
    """`TemporalServer:*` — the Temporal dev server `esteira dev` runs, which has no auth."""

    # Its frontend and Web UI accept anyone who reaches them: loopback unless opened on purpose.
    bind_host: str = "127.0.0.1"
    # Terminate, cancel, signal, reset... from the Web UI: off unless asked for.
    ui_write_actions: bool = False
# --- end of the embedded Temporal dev server block ---


# --- Readiness (hardening: a worker polling is part of being ready) ---
class ReadinessSettings(BaseModel):
    """`Readiness:*` — what /api/ready, the banner and `esteira status` require."""

    # Domains whose task queues must have a live polling worker; [] requires none.
    worker_domains: list[Literal["signer", "pickup", "sisbajud", "ops"]] = Field(
        default_factory=lambda: ["signer", "pickup", "sisbajud"])
    # A worker process silent this long is taken for dead, although Temporal keeps listing
    # its pollers for about a minute.
    poller_stale_seconds: float = Field(default=15.0, ge=1)
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


class Settings(BaseSettings):
    """The whole configuration of one Esteira process."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="forbid", validate_default=True
    )

    environment: str = "Development"
    data_dir: Path = Path("data")
    host: str = "127.0.0.1"
    api_key: SecretStr | None = None
    database_url: SecretStr | None = None
    ports: PortSettings = Field(default_factory=PortSettings)
    pipeline: PipelineSettings = Field(default_factory=PipelineSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    signing: SigningSettings = Field(default_factory=SigningSettings)
    notifications: NotificationSettings = Field(default_factory=NotificationSettings)
    upload: UploadSettings = Field(default_factory=UploadSettings)
    signer: SignerSettings = Field(default_factory=SignerSettings)
    cluster: ClusterSettings = Field(default_factory=ClusterSettings)
    logging: LogSettings = Field(default_factory=LogSettings)
    temporal: TemporalSettings = Field(default_factory=TemporalSettings)
    temporal_server: TemporalServerSettings = Field(default_factory=TemporalServerSettings)
    pickup: PickupSettings = Field(default_factory=PickupSettings)
    sisbajud: SisbajudSettings = Field(default_factory=SisbajudSettings)
    dashboard: DashboardSettings = Field(default_factory=DashboardSettings)
    readiness: ReadinessSettings = Field(default_factory=ReadinessSettings)
    grpc: GrpcSettings = Field(default_factory=GrpcSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Environment beats the config file, the config file beats defaults."""
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        config_file = os.environ.get(CONFIG_FILE_ENV)
        if config_file:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=Path(config_file)))
        return tuple(sources)

    # Paths derived from data_dir, so one setting moves a whole instance.
    @property
    def storage_root(self) -> Path:
        """`data/storage` unless `Storage:Root` says otherwise."""
        return (self.storage.root or self.data_dir / "storage").resolve()

    @property
    def log_dir(self) -> Path:
        """`data/logs` unless `Logging:Directory` says otherwise."""
        return (self.logging.directory or self.data_dir / "logs").resolve()

    @property
    def api_key_file(self) -> Path:
        """Where `esteira dev` keeps a generated API key."""
        return self.data_dir.resolve() / "api-key"

    @property
    def sqlalchemy_url(self) -> str:
        """The operational store's URL, SQLite under `data/db/` by default."""
        if self.database_url is not None:
            return normalise_database_url(self.database_url.get_secret_value())
        return f"sqlite+aiosqlite:///{(self.data_dir / 'db' / 'esteira.db').resolve()}"

    @property
    def temporal_address(self) -> str:
        """`TEMPORAL_ADDRESS`, or the embedded dev server on this host."""
        return self.temporal.address or f"127.0.0.1:{self.ports.temporal}"

    @property
    def effective_inputs(self) -> list[InputFolderSettings]:
        """`Storage:Inputs[]`, or the implicit `inbox` when none is configured."""
        return self.storage.inputs or [InputFolderSettings(name="inbox")]

    def input_folder_path(self, folder: InputFolderSettings) -> Path:
        """An input folder's path: explicit, or `storage/input/<name>`."""
        return (folder.path or self.storage_root / "input" / folder.name).resolve()


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


class ConfigurationError(Exception):
    """The configuration can't be used; the message names each offending key."""


def load_settings(**overrides: Any) -> Settings:
    """Build settings from the environment and config file, naming bad keys in the error."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise ConfigurationError(describe_validation_error(exc)) from None


def describe_validation_error(exc: ValidationError) -> str:
    """One line per bad key, in both the environment and the dotted spelling."""
    lines = ["Invalid configuration:"]
    for error in exc.errors():
        loc = [str(part) for part in error["loc"]]
        dotted = ".".join(loc)
        env_name = ENV_PREFIX + "__".join(p.upper() for p in loc if not p.isdigit())
        lines.append(f"  {env_name} ({dotted}): {error['msg']}")
    return "\n".join(lines)


def unknown_environment_keys(environ: dict[str, str] | None = None) -> list[str]:
    """`ESTEIRA_*` variables that match no setting: most likely typos."""
    environ = dict(os.environ if environ is None else environ)
    known = {ENV_PREFIX + name.upper() for name in Settings.model_fields}
    known |= {CONFIG_FILE_ENV, "ESTEIRA_CHILD", "ESTEIRA_BUILD"}
    return sorted(
        key
        for key in environ
        if key.startswith(ENV_PREFIX) and key.split("__")[0] not in known
    )
