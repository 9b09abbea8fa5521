"""A SISBAJUD world per test: simulators in process, the test's store and task queue."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from tests.support.sisbajud import World, sisbajud_settings


@pytest_asyncio.fixture
async def world(settings, task_queue) -> AsyncIterator[World]:
    """Simulators, store and settings wired together (no worker yet)."""
    world = await World(sisbajud_settings(settings, task_queue)).start()
    try:
        yield world
    finally:
        await world.close()


@pytest_asyncio.fixture
async def make_world(settings, task_queue):
    """A World per call, with its own settings (heartbeat period, beats before a person, …)."""
    worlds: list[World] = []

    async def make(**overrides) -> World:
        world = await World(sisbajud_settings(settings, task_queue, **overrides)).start()
        worlds.append(world)
        return world

    yield make
    for world in worlds:
        await world.close()
