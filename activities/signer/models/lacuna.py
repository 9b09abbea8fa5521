"""Tables of the SignerFolder method: the discovery registry and each folder's last scan."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, DateTime
from sqlmodel import Field, SQLModel

from shared.db.models import utcnow


class SignerFolderRegistry(SQLModel, table=True):
    """A (document, flow action) pair a SignerFolder profile has taken on; never deleted with
    its jobs, so neither a job deletion nor Clear Jobs makes the scan sign it again."""

    __tablename__ = "signer_folder_registry"

    profile_name: str = Field(primary_key=True, max_length=100)
    document_id: str = Field(primary_key=True, max_length=64)
    flow_action_id: str = Field(primary_key=True, max_length=64)
    # Registered (a job was made), NoAction (recorded as Failed: no action for the holder) or
    # NoActionAgain (recorded Failed a second time by the next scan; never again).
    state: str = Field(default="Registered", max_length=16)
    first_job_id: str | None = Field(default=None, max_length=36)
    discovered_at: datetime = Field(default_factory=utcnow, sa_column=Column(
        DateTime(timezone=True), nullable=False))


class SignerFolderScan(SQLModel, table=True):
    """The last scan of a SignerFolder profile's folder: whether the folder still exists."""

    __tablename__ = "signer_folder_scans"

    profile_name: str = Field(primary_key=True, max_length=100)
    folder_id: str = Field(max_length=100)
    ok: bool = True
    detail: str = ""
    scanned_at: datetime = Field(default_factory=utcnow, sa_column=Column(
        DateTime(timezone=True), nullable=False))


class SignerDispatch(SQLModel, table=True):
    """A LacunaSigner dispatch in progress: written before the first remote call, so a worker
    lost mid-dispatch is resumed (asking the Signer) instead of failed or dispatched twice."""

    __tablename__ = "signer_lacuna_dispatches"

    job_id: str = Field(primary_key=True, max_length=36)
    # Carries the job id: the Signer's document search finds a document whose id we lost.
    document_name: str = Field(max_length=300)
    upload_id: str | None = Field(default=None, max_length=64)
    document_id: str | None = Field(default=None, max_length=64)
    started_at: datetime = Field(default_factory=utcnow, sa_column=Column(
        DateTime(timezone=True), nullable=False))
