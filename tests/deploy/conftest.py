"""Session fixtures of the docker tier: one engine, one image build for every test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.deploy.docker_engine import (
    EngineUnavailableError,
    base_image,
    build_image,
    start_engine,
    stop_engine,
)


@pytest.fixture(scope="session")
def docker_engine() -> Iterator[None]:
    """A Docker engine that answers (started here when none runs; stopped again after)."""
    try:
        started = start_engine()
    except EngineUnavailableError as exc:
        pytest.skip(str(exc))
    yield
    if started:
        stop_engine()


@pytest.fixture(scope="session")
def python_base_image(docker_engine) -> str:
    """The debootstrap python base (no registry to pull `python:3.11-slim` from)."""
    return base_image()


@pytest.fixture(scope="session")
def esteira_image(python_base_image) -> str:
    """The project's Dockerfile built on that base, once per session."""
    return build_image(python_base_image)
