"""Settings of the signer domain: pipeline, storage, signing, the Lacuna Signer, approvals."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator


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
    # Seed data: binds the folder on the first boot with an empty profile table only; later
    # boots report it ignored (a profile chooses its folder on its own page from then on).
    profile: str | None = None


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
    default_profile: str = "default"
    # BSENC v1 passphrase for profiles that encrypt; the salt lives in data/keys/.
    encryption_passphrase: SecretStr | None = None
    # The only PKCS#11 modules a profile may name (absolute paths): code to load comes from
    # deployment configuration, never from an API request.
    pkcs11_modules: list[str] = Field(default_factory=list)
    # The only directories a profile's key files (pfx_path, pfx_password_file) may be in
    # (absolute paths); empty: certs/ and pki/ of the data directory and of /etc/esteira.
    key_directories: list[str] = Field(default_factory=list)
    # B-LTA archive renewal: a fresh document timestamp this long before the last one's TSA
    # certificate expires, looked for by a Temporal Schedule this often.
    archive_renewal_margin_days: float = Field(default=90.0, gt=0)
    archive_check_every_seconds: float = Field(default=6 * 3600.0, ge=1)

    @field_validator("pkcs11_modules", "key_directories")
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


class NotificationSettings(BaseModel):
    """`Notifications:*` — the e-mails that ask approvers to decide."""

    # None: the SMTP sink of `esteira dev` on <host>:<ports.smtp>.
    smtp_host: str | None = None
    smtp_port: int | None = Field(default=None, ge=1, le=65535)
    # `starttls` upgrades a plain connection (port 587) and fails if the server won't;
    # `tls` is implicit TLS from the first byte (SMTPS, port 465); `none` only for a relay on
    # this host or the dev sink.
    smtp_security: Literal["none", "starttls", "tls"] = "none"
    smtp_username: str | None = None
    smtp_password: SecretStr | None = None
    # PEM CA bundle that issued the relay's certificate; None: the system's trust store.
    smtp_ca_file: Path | None = None
    from_address: str = "esteira@localhost"
    # The address approvers reach the API at; None: http://<host>:<ports.api>.
    public_url: str | None = None

    @model_validator(mode="after")
    def _auth_over_tls(self) -> NotificationSettings:
        if (self.smtp_username is None) != (self.smtp_password is None):
            raise ValueError("ESTEIRA_NOTIFICATIONS__SMTP_USERNAME and …__SMTP_PASSWORD go "
                             "together: set both or neither")
        if self.smtp_username is not None and self.smtp_security == "none":
            # AUTH PLAIN/LOGIN send the password as base64: never over a clear connection.
            raise ValueError("ESTEIRA_NOTIFICATIONS__SMTP_USERNAME needs "
                             "ESTEIRA_NOTIFICATIONS__SMTP_SECURITY=starttls or tls")
        return self
