"""Apply Alembic migrations to the operational store."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

MIGRATIONS_DIR = Path(__file__).with_name("migrations")


def alembic_config(url: str) -> Config:
    """An Alembic config pointing at our migrations and `url` (no ini file needed)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["url"] = url
    return config


def upgrade(url: str, revision: str = "head") -> None:
    """Bring the store at `url` up to `revision` (idempotent). Blocking: run off the loop."""
    command.upgrade(alembic_config(url), revision)


def head_revision() -> str:
    """The newest migration this build knows."""
    head = ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()
    assert head is not None
    return head


def current_revision(sync_connection) -> str | None:
    """The revision a database is at (for readiness and `esteira status`)."""
    return MigrationContext.configure(sync_connection).get_current_revision()
