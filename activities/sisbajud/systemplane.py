"""The routing documents where Lerian's Systemplane keeps them, hot-reloaded on its change feed.

Schema read (lib-systemplane v4, `LerianStudio/lib-systemplane`: `ddl/schema.sql` plus
`ddl/migrate_v3_to_v4.sql`, and `MIGRATION-v4.md` "The database and operator contract"):
table `systemplane_entries (namespace TEXT, "key" TEXT, value JSONB, updated_at TIMESTAMPTZ,
updated_by TEXT, revision BIGINT, PRIMARY KEY (namespace, "key"))`, whose triggers
`pg_notify('systemplane_changes', {"namespace", "key", "op": "upsert"|"delete", "revision"})`
on every insert, update and delete. Tenancy is one database per tenant (lib-systemplane
refuses one schema per tenant: NOTIFY is database-wide), so the DSN names this executor's
tenant. After each (re)connect the feed is reconciled by reading both keys again, as
lib-systemplane's own engine does; while no feed is up every read goes to the table.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import weakref
from typing import Any

import asyncpg
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.sisbajud.routing import DOCUMENT_KEYS, load_documents
from shared.settings import Settings

CHANNEL = "systemplane_changes"
TABLE = "systemplane_entries"
# A lost feed is reopened after this long (the reads in between go to the table).
RECONNECT_SECONDS = 1.0
CONNECT_TIMEOUT_SECONDS = 5.0
# While the feed is up both keys are read again this often: a connection that died without a
# word (no TCP reset) would otherwise leave the cache unconfirmed for good.
RECONCILE_SECONDS = 30.0
QUERY_TIMEOUT_SECONDS = 5.0
log = logging.getLogger("esteira.sisbajud")


class SystemplaneUnavailable(Exception):
    """The Systemplane database could not be read: routes can't be resolved now."""


def asyncpg_dsn(url: str) -> str:
    """`postgresql+asyncpg://…` (SQLAlchemy's form) or `postgres(ql)://…` as asyncpg takes it."""
    scheme, sep, rest = url.partition("://")
    return f"postgresql://{rest}" if sep and scheme.startswith("postgres") else url


class SystemplaneDocuments:
    """`routing.organizations` and `routing.ledger_bindings` of one tenant's namespace."""

    def __init__(self, dsn: str, namespace: str) -> None:
        self._dsn = asyncpg_dsn(dsn)
        self._namespace = namespace
        self._cache: dict[str, Any] = {}
        self._live = False  # the feed is connected and reconciled: the cache is current
        self._feed: asyncio.Task[None] | None = None
        self._query = asyncio.Lock()  # one query at a time on the feed's connection
        self.reloads = 0  # changes applied from the feed (for tests and the banner)

    @property
    def live(self) -> bool:
        """Whether the change feed is up (reads come from the cache)."""
        return self._live

    def start(self) -> None:
        """Open the change feed in the background (idempotent)."""
        if self._feed is None or self._feed.done():
            self._feed = asyncio.get_running_loop().create_task(self._follow())

    async def close(self) -> None:
        """Stop the feed."""
        if self._feed is not None:
            self._feed.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._feed
        self._live = False

    async def documents(self) -> dict[str, Any]:
        """Both documents (a missing one is absent); SystemplaneUnavailable if unreadable."""
        self.start()
        if self._live:
            return dict(self._cache)
        try:
            connection = await asyncpg.connect(self._dsn, timeout=CONNECT_TIMEOUT_SECONDS)
        except (TimeoutError, OSError, asyncpg.PostgresError) as exc:
            raise SystemplaneUnavailable(f"Systemplane is unreachable: {exc}") from exc
        try:
            return await self._read(connection)
        except asyncpg.PostgresError as exc:
            raise SystemplaneUnavailable(f"Systemplane could not be read: {exc}") from exc
        finally:
            await connection.close()

    async def _read(self, connection: asyncpg.Connection,
                    keys: tuple[str, ...] = DOCUMENT_KEYS) -> dict[str, Any]:
        rows = await connection.fetch(
            f'SELECT "key", value FROM {TABLE} WHERE namespace = $1 AND "key" = ANY($2)',
            self._namespace, list(keys), timeout=QUERY_TIMEOUT_SECONDS)
        return {row["key"]: json.loads(row["value"]) for row in rows}

    async def _follow(self) -> None:
        while True:
            connection: asyncpg.Connection | None = None
            try:
                connection = await asyncpg.connect(self._dsn, timeout=CONNECT_TIMEOUT_SECONDS)
                lost = asyncio.Event()
                connection.add_termination_listener(lambda _c, lost=lost: lost.set())
                # LISTEN first, then read: a change made in between is not missed.
                await connection.add_listener(CHANNEL, self._notified)
                async with self._query:
                    self._cache = await self._read(connection)
                self._live = True
                while not lost.is_set():
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(lost.wait(), RECONCILE_SECONDS)
                        break
                    async with self._query:  # fails (and reconnects) on a dead connection
                        self._cache = await self._read(connection)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # any failure: reads go to the table until it is back
                log.warning("Systemplane change feed down: %s", exc)
            finally:
                self._live = False
                if connection is not None and not connection.is_closed():
                    with contextlib.suppress(Exception):
                        await connection.close()
            await asyncio.sleep(RECONNECT_SECONDS)

    def _notified(self, connection: asyncpg.Connection, _pid: int, _channel: str,
                  payload: str) -> None:
        try:
            change = json.loads(payload)
        except ValueError:
            return
        key = change.get("key")
        if change.get("namespace") != self._namespace or key not in DOCUMENT_KEYS:
            return
        asyncio.get_running_loop().create_task(self._reload(connection, key))

    async def _reload(self, connection: asyncpg.Connection, key: str) -> None:
        """Re-read the changed key (the payload carries no value, only that it changed)."""
        try:
            async with self._query:
                found = await self._read(connection, (key,))
        except Exception as exc:  # the feed is suspect: read through until it is back
            log.warning("Systemplane re-read of %s failed: %s", key, exc)
            self._live = False
            with contextlib.suppress(Exception):
                connection.terminate()
            return
        if key in found:
            self._cache[key] = found[key]
        else:
            self._cache.pop(key, None)
        self.reloads += 1
        log.info("Systemplane %s/%s reloaded", self._namespace, key)


# Per event loop: a feed's task and connection belong to the loop that opened them.
_SOURCES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop,
                                    dict[tuple[str, str], SystemplaneDocuments]] = (
    weakref.WeakKeyDictionary())


def documents_for(dsn: str, namespace: str) -> SystemplaneDocuments:
    """This event loop's reader of `namespace` at `dsn` (one feed per process and loop)."""
    readers = _SOURCES.setdefault(asyncio.get_running_loop(), {})
    if (dsn, namespace) not in readers:
        readers[(dsn, namespace)] = SystemplaneDocuments(dsn, namespace)
    return readers[(dsn, namespace)]


async def current_documents(settings: Settings,
                            sessions: async_sessionmaker[AsyncSession]) -> dict[str, Any]:
    """The routing documents: Systemplane's when a DSN is set, else the ones the admin API
    keeps in this executor's store (SystemplaneUnavailable when Systemplane can't be read)."""
    sis = settings.sisbajud
    if sis.systemplane_dsn is None:
        async with sessions() as session:
            return await load_documents(session)
    return await documents_for(sis.systemplane_dsn.get_secret_value(),
                               sis.systemplane_namespace).documents()


async def read_entry(dsn: str, namespace: str, key: str) -> dict[str, Any] | None:
    """One entry with its provenance (`revision`, `updatedBy`, `updatedAt`), None if absent."""
    connection = await _connect(dsn)
    try:
        row = await connection.fetchrow(
            f'SELECT value, revision, updated_by, updated_at FROM {TABLE} '
            'WHERE namespace = $1 AND "key" = $2', namespace, key)
    finally:
        await connection.close()
    if row is None:
        return None
    return {"key": key, "document": json.loads(row["value"]), "version": row["revision"],
            "updatedBy": row["updated_by"], "updatedAt": row["updated_at"].isoformat()}


async def write_entry(dsn: str, namespace: str, key: str, value: Any,
                      actor: str) -> dict[str, Any]:
    """Upsert one entry as lib-systemplane's `Set` does (DML only; its triggers assign the
    revision and announce the change on `systemplane_changes`)."""
    connection = await _connect(dsn)
    try:
        await connection.execute(
            f'INSERT INTO {TABLE} (namespace, "key", value, updated_by) '
            "VALUES ($1, $2, $3::jsonb, $4) ON CONFLICT (namespace, \"key\") DO UPDATE "
            "SET value = EXCLUDED.value, updated_by = EXCLUDED.updated_by, updated_at = now()",
            namespace, key, json.dumps(value), actor[:200])
    finally:
        await connection.close()
    entry = await read_entry(dsn, namespace, key)
    assert entry is not None
    return entry


async def _connect(dsn: str) -> asyncpg.Connection:
    try:
        return await asyncpg.connect(asyncpg_dsn(dsn), timeout=CONNECT_TIMEOUT_SECONDS)
    except (TimeoutError, OSError, asyncpg.PostgresError) as exc:
        raise SystemplaneUnavailable(f"Systemplane is unreachable: {exc}") from exc
