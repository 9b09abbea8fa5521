"""A migrated store (SQLite and PostgreSQL) with the pickup activities on it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from tests.support.pickup import PickupStore, open_store


@pytest_asyncio.fixture
async def store(tmp_path, database_url: str) -> AsyncIterator[PickupStore]:
    async with open_store(tmp_path, database_url) as opened:
        yield opened
