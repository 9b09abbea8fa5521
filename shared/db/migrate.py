"""Apply Alembic migrations to the operational store."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection

MIGRATIONS_DIR = Path(__file__).with_name("migrations")


def alembic_config(url: str) -> Config:
    """An Alembic config pointing at our migrations and `url` (no ini file needed)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    # The foundation's own versions, then each domain's, kept in its home.
    config.set_main_option("version_locations", " ".join(
        str(folder) for folder in version_folders()))
    config.attributes["url"] = url
    return config


def version_folders() -> list[Path]:
    """`shared/db/migrations/versions`, then `activities/<domain>/migrations` of each domain.

    Found on disk, not imported: the store's migrations need no domain code loaded.
    """
    domains = Path(__file__).resolve().parents[2] / "activities"
    return [MIGRATIONS_DIR / "versions", *sorted(domains.glob("*/migrations"))]


def upgrade(url: str, revision: str = "heads") -> None:
    """Bring the store at `url` up to `revision` (idempotent). Blocking: run off the loop.

    Each domain keeps its own branch off the foundation (`branch_labels = ("<domain>",)`),
    so domains add migrations independently; `heads` applies every branch.
    """
    command.upgrade(alembic_config(url), revision)


def head_revisions() -> set[str]:
    """The newest migration of each branch this build knows."""
    return set(ScriptDirectory.from_config(alembic_config("sqlite://")).get_heads())


def current_revisions(sync_connection: Connection) -> set[str]:
    """The revisions a database is at, one per branch."""
    return set(MigrationContext.configure(sync_connection).get_current_heads())
