"""Tables of the signer: profiles, jobs, job history, input folder state."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, DateTime, ForeignKey, Index, String, text
from sqlmodel import Field, SQLModel

from activities.signer.contracts.jobs import ACTIVE_STATUSES
from shared.db.models import utcnow

ACTIVE_STATUS_SQL = "(" + ",".join(sorted(f"'{s.value}'" for s in ACTIVE_STATUSES)) + ")"


def _ts(nullable: bool = True, **kwargs: Any) -> Any:
    if nullable:
        return Field(default=None, sa_column=Column(DateTime(timezone=True), nullable=True,
                                                     **kwargs))
    return Field(default_factory=utcnow, sa_column=Column(DateTime(timezone=True),
                                                          nullable=False, **kwargs))


class SigningProfile(SQLModel, table=True):
    """A signing profile: certificate, format, checks, encryption, and the folder it owns."""

    __tablename__ = "signing_profiles"

    name: str = Field(primary_key=True, max_length=100)
    format: str = Field(default="auto", max_length=16)
    cert_source: str = Field(default="pfx", max_length=16)
    pfx_path: str | None = None
    pfx_password_env: str | None = Field(default=None, max_length=200)
    pfx_password_file: str | None = None
    pkcs11_module: str | None = None
    pkcs11_token_label: str | None = Field(default=None, max_length=200)
    pkcs11_thumbprint: str | None = Field(default=None, max_length=64)
    pkcs11_pin_env: str | None = Field(default=None, max_length=200)
    trust_roots: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    verify: bool = True
    validate_certificate: bool = True
    policy: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    # A catalogue policy (e.g. AD-RB), its document's path and published SHA-256 (hex/base64).
    policy_name: str | None = Field(default=None, max_length=32)
    policy_document: str | None = None
    policy_digest: str | None = Field(default=None, max_length=88)
    encrypt: bool = False
    enabled: bool = True
    # One folder per profile, one profile per folder: the unique index is the arbiter.
    input_folder: str | None = Field(
        default=None, sa_column=Column(String(100), nullable=True, unique=True))
    is_dev: bool = False
    # The Approval block (approvers, quorum, expires_after_seconds); None: no approval step.
    approval: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    check_cnab240_payment_dates: bool = True
    # Local, LacunaSigner (dispatched to a Signer flow) or SignerFolder (signs a Signer folder).
    method: str = Field(default="Local", max_length=16)
    signer_flow: list[dict[str, Any]] = Field(default_factory=list,
                                              sa_column=Column(JSON, nullable=False))
    signer_folder_id: str | None = Field(default=None, max_length=100)
    # Holder (the profile's own key signs) or Approvers (KEYLESS: the approval block's people
    # sign at the Lacuna Signer; the host holds no key).
    signers: str = Field(default="Holder", max_length=16)
    # B-B, B-T, B-LT or B-LTA; the TSAs (urls, auth, env var names of secrets, hash, timeout),
    # the revocation responders' timeout, and a cloud certificate's CSC credential.
    signature_level: str = Field(default="B-B", max_length=8)
    timestamp: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    revocation_timeout_seconds: float = 10.0
    csc: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    created_at: datetime = _ts(nullable=False)
    updated_at: datetime = _ts(nullable=False)
    version: int = 0


class ArchivedOutput(SQLModel, table=True):
    """A B-LTA output kept verifiable in `archive/`: its newest revision and when it expires."""

    __tablename__ = "signer_archive"
    __table_args__ = (Index("ix_signer_archive_expiry", "tsa_expires_at"),)

    name: str = Field(primary_key=True, max_length=500)
    path: str
    level: str = Field(max_length=8)
    profile_name: str | None = Field(default=None, max_length=100)
    job_id: str | None = Field(default=None, max_length=36)
    # Document timestamps in the file: a replayed renewal finds the file ahead of the row.
    timestamps: int = 1
    # Expiry of the certificate of the TSA behind the newest document timestamp.
    tsa_expires_at: datetime = _ts(nullable=False)
    renewed_at: datetime | None = _ts()
    last_error: str | None = None
    created_at: datetime = _ts(nullable=False)
    updated_at: datetime = _ts(nullable=False)


class Job(SQLModel, table=True):
    """One file (or document) to sign, from Queued to a terminal state."""

    __tablename__ = "jobs"
    __table_args__ = (
        # Exactly one active job per original path: the loser of a race gets AlreadyActive.
        Index("ux_jobs_active_original_path", text("lower(original_path)"), unique=True,
              sqlite_where=text(f"status IN {ACTIVE_STATUS_SQL}"),
              postgresql_where=text(f"status IN {ACTIVE_STATUS_SQL}")),
        Index("ix_jobs_file_name_lower", text("lower(file_name)"), "status"),
        Index("ix_jobs_status_created_id", "status", "created_at", "id"),
        Index("ix_jobs_created", "created_at", "id"),
        Index("ix_jobs_unstarted", "status", "workflow_started_at"),
        Index("ix_jobs_original_path_lower", text("lower(original_path)"), "created_at"),
    )

    id: str = Field(primary_key=True, max_length=36)
    file_name: str = Field(max_length=500)
    original_path: str
    folder: str | None = Field(default=None, max_length=100)
    source: str = Field(max_length=16)
    profile_name: str | None = Field(default=None, max_length=100)
    format: str = Field(max_length=16)
    status: str = Field(max_length=32)
    error_code: str | None = Field(default=None, max_length=100)
    error_message: str | None = None
    parent_job_id: str | None = Field(
        default=None, sa_column=Column(String(36), ForeignKey("jobs.id"), nullable=True))
    input_size: int | None = None
    input_sha256: str | None = Field(default=None, max_length=64)
    output_path: str | None = None
    instance_id: str | None = Field(default=None, max_length=200)
    # The Lacuna Signer document (and, for a Signer-folder job, this holder's flow action).
    remote_document_id: str | None = Field(default=None, max_length=64)
    remote_flow_action_id: str | None = Field(default=None, max_length=64)
    created_at: datetime = _ts(nullable=False)
    started_at: datetime | None = _ts()
    workflow_started_at: datetime | None = _ts()
    signing_started_at: datetime | None = _ts()
    completed_at: datetime | None = _ts()
    updated_at: datetime = _ts(nullable=False)
    version: int = 0


class JobHistory(SQLModel, table=True):
    """One state transition (or notable step) of a job."""

    __tablename__ = "job_history"

    id: int | None = Field(default=None, primary_key=True)
    job_id: str = Field(sa_column=Column(String(36), ForeignKey("jobs.id", ondelete="CASCADE"),
                                         nullable=False, index=True))
    at: datetime = _ts(nullable=False)
    from_status: str | None = Field(default=None, max_length=32)
    to_status: str | None = Field(default=None, max_length=32)
    code: str | None = Field(default=None, max_length=100)
    message: str


class InputFolderState(SQLModel, table=True):
    """What the watcher of a folder is doing: Running, Stopped (with why) or Unassigned."""

    __tablename__ = "input_folder_state"

    name: str = Field(primary_key=True, max_length=100)
    status: str = Field(max_length=16)
    last_error: str | None = None
    consecutive_failures: int = 0
    last_scan_at: datetime | None = _ts()
    updated_at: datetime = _ts(nullable=False)
