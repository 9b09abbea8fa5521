"""The signer objects a door builds once from its store, settings and Temporal client."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio.client import Client

from activities.signer.enqueue import Enqueuer, Outcome
from activities.signer.ignore import ignored
from activities.signer.repository import JobRepository
from activities.signer.storage import StorageTree
from shared.settings import Settings

# Types a door holds or compares, and the watcher's name filter.
__all__ = ["Enqueuer", "JobRepository", "Outcome", "StorageTree", "enqueuer", "ignored",
           "repository", "storage"]


def repository(sessions: async_sessionmaker[AsyncSession]) -> JobRepository:
    """The jobs store."""
    return JobRepository(sessions)


def storage(settings: Settings) -> StorageTree:
    """The storage tree under `Storage:Root`."""
    return StorageTree(settings.storage_root)


def enqueuer(sessions: async_sessionmaker[AsyncSession], settings: Settings,
             client: Client) -> Enqueuer:
    """The one path that turns a file into a job, configured by `Pipeline:*`."""
    return Enqueuer.from_settings(repository(sessions), storage(settings), client, settings)
