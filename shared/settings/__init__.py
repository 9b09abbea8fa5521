"""Esteira's configuration: environment variables, an optional config file, seed-like keys.

The root `Settings` lives here; each domain's sections live in `signer`, `pickup` and
`sisbajud`, the shared ones in `core`. Every name is re-exported, so `from shared.settings
import X` works for all of them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import Field, SecretStr, ValidationError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from activities.pickup.settings import PickupSettings
from activities.signer.settings import (
    InputFolderSettings,
    NotificationSettings,
    PipelineSettings,
    SignerSettings,
    SigningSettings,
    StorageSettings,
    UploadSettings,
)
from activities.sisbajud.settings import (
    DEV_MIDAZ_LEDGER_ID,
    DEV_MIDAZ_ORGANIZATION_ID,
    SEED_SISBAJUD_ENV,
    InstitutionSettings,
    SisbajudSettings,
)
from shared.contracts.dev_credentials import (
    DEV_M2M_CLIENT_ID,
    DEV_M2M_CLIENT_SECRET,
    DEV_M2M_SUBJECT,
)
from shared.durations import seconds_of
from shared.settings.core import (
    CONFIG_FILE_ENV,
    ENV_PREFIX,
    ClusterSettings,
    DashboardSettings,
    DemoSettings,
    GrpcSettings,
    LogSettings,
    OperatorAccount,
    PayloadCodecSettings,
    PortSettings,
    ReadinessSettings,
    TemporalServerSettings,
    TemporalSettings,
    TracingSettings,
    normalise_database_url,
)

__all__ = [
    "CONFIG_FILE_ENV", "DEV_M2M_CLIENT_ID", "DEV_M2M_CLIENT_SECRET", "DEV_M2M_SUBJECT",
    "DEV_MIDAZ_LEDGER_ID", "DEV_MIDAZ_ORGANIZATION_ID", "ENV_PREFIX", "SEED_SISBAJUD_ENV",
    "ClusterSettings", "ConfigurationError", "DashboardSettings", "DemoSettings", "GrpcSettings",
    "InputFolderSettings", "InstitutionSettings", "LogSettings", "NotificationSettings",
    "OperatorAccount", "PayloadCodecSettings", "PickupSettings", "PipelineSettings", "PortSettings",
    "ReadinessSettings", "Settings", "SignerSettings", "SigningSettings", "SisbajudSettings",
    "StorageSettings", "TemporalServerSettings", "TemporalSettings", "TracingSettings",
    "UploadSettings",
    "describe_validation_error", "load_settings", "normalise_database_url", "seconds_of",
    "unknown_environment_keys",
]


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
    tracing: TracingSettings = Field(default_factory=TracingSettings)
    pickup: PickupSettings = Field(default_factory=PickupSettings)
    sisbajud: SisbajudSettings = Field(default_factory=SisbajudSettings)
    dashboard: DashboardSettings = Field(default_factory=DashboardSettings)
    demo: DemoSettings = Field(default_factory=DemoSettings)
    readiness: ReadinessSettings = Field(default_factory=ReadinessSettings)
    grpc: GrpcSettings = Field(default_factory=GrpcSettings)
    payload_codec: PayloadCodecSettings = Field(default_factory=PayloadCodecSettings)

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
    def access_log(self) -> bool:
        """`Logging:AccessLog`, else on everywhere but Development."""
        configured = self.logging.access_log
        return self.environment != "Development" if configured is None else configured

    @property
    def api_key_file(self) -> Path:
        """Where `esteira dev` keeps a generated API key."""
        return self.data_dir.resolve() / "api-key"

    @property
    def payload_key_file(self) -> Path:
        """`PayloadCodec:KeyFile`, else `data/keys/temporal-payload.keys`."""
        return (self.payload_codec.key_file
                or self.data_dir / "keys" / "temporal-payload.keys").resolve()

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
