"""Contract of the signer's archive renewal: names, schedule, inputs and results.

The names are in saved histories and running workflows: never change one, add a new name.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

ARCHIVE_RENEWAL_WORKFLOW = "signer-archive-renewal"
DUE_ARCHIVES_ACTIVITY = "signer-archive-due"
RENEW_ARCHIVE_ACTIVITY = "signer-archive-renew"
# One schedule per deployment (its task queue suffix tells deployments apart).
ARCHIVE_RENEWAL_SCHEDULE = "signer-archive-renewal"
# What a B-LTA output's newest revision lives under, beside output/.
ARCHIVE_DIR = "archive"


def archive_schedule_id(suffix: str = "") -> str:
    """`signer-archive-renewal<suffix>`."""
    return ARCHIVE_RENEWAL_SCHEDULE + suffix


class RenewArchivesInput(BaseModel):
    """One scheduled pass: renew what expires within the margin."""

    model_config = ConfigDict(frozen=True)

    margin_seconds: float
    max_per_run: int = 500


class DueArchive(BaseModel):
    """An archived file to renew, and how many document timestamps it had when seen."""

    model_config = ConfigDict(frozen=True)

    name: str
    timestamps: int


class DueArchivesResult(BaseModel):
    """The archived files whose last timestamp expires within the margin, oldest first."""

    model_config = ConfigDict(frozen=True)

    due: list[DueArchive]


class RenewArchiveInput(BaseModel):
    """Renew one file; `timestamps` is the idempotency key (a replay finds the file ahead)."""

    model_config = ConfigDict(frozen=True)

    name: str
    timestamps: int


class RenewArchiveResult(BaseModel):
    """What one renewal did: `renewed`, already done (`replayed`), or why it could not."""

    model_config = ConfigDict(frozen=True)

    name: str
    renewed: bool = False
    replayed: bool = False
    error_code: str | None = None
    message: str = ""
    tsa_expires_at: str | None = None


class RenewArchivesResult(BaseModel):
    """A pass's tally."""

    model_config = ConfigDict(frozen=True)

    renewed: int = 0
    replayed: int = 0
    failed: int = 0
