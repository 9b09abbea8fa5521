"""A Systemplane tenant database for tests: the `systemplane_entries` table and its feed.

The shape lib-systemplane v4 publishes for PostgreSQL (LerianStudio/lib-systemplane
`ddl/schema.sql` with `ddl/migrate_v3_to_v4.sql`): rows by (namespace, key) with a JSONB value
and a revision from a table-wide sequence, and a NOTIFY on `systemplane_changes` carrying
{namespace, key, op, revision} after each insert, update or delete. Written here from that
description; the executor reads only the table and the channel.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg

from activities.sisbajud.systemplane import asyncpg_dsn

SCHEMA = """
CREATE SEQUENCE systemplane_revision_seq AS BIGINT;
CREATE TABLE systemplane_entries (
    namespace  TEXT NOT NULL,
    "key"      TEXT NOT NULL,
    value      JSONB NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_by TEXT NOT NULL DEFAULT '',
    revision   BIGINT NOT NULL,
    PRIMARY KEY (namespace, "key")
);
CREATE FUNCTION systemplane_test_revision() RETURNS TRIGGER AS $$
BEGIN
    IF TG_OP = 'INSERT' OR OLD.value IS DISTINCT FROM NEW.value THEN
        NEW.revision := nextval('systemplane_revision_seq');
    ELSE
        NEW.revision := OLD.revision;
    END IF;
    RETURN NEW;
END $$ LANGUAGE plpgsql;
CREATE FUNCTION systemplane_test_notify() RETURNS TRIGGER AS $$
DECLARE row_ systemplane_entries;
BEGIN
    IF TG_OP = 'DELETE' THEN row_ := OLD; ELSE row_ := NEW; END IF;
    PERFORM pg_notify('systemplane_changes', json_build_object(
        'namespace', row_.namespace, 'key', row_.key,
        'op', CASE WHEN TG_OP = 'DELETE' THEN 'delete' ELSE 'upsert' END,
        'revision', CASE WHEN TG_OP = 'DELETE' THEN 0 ELSE row_.revision END)::text);
    RETURN row_;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER systemplane_bump_revision_trigger BEFORE INSERT OR UPDATE
    ON systemplane_entries FOR EACH ROW EXECUTE FUNCTION systemplane_test_revision();
CREATE TRIGGER systemplane_notify_trigger AFTER INSERT OR UPDATE OR DELETE
    ON systemplane_entries FOR EACH ROW EXECUTE FUNCTION systemplane_test_notify();
"""


@asynccontextmanager
async def tenant_database(admin_url: str) -> AsyncIterator[str]:
    """A fresh database holding the Systemplane schema; its SQLAlchemy-style URL."""
    name = f"sp_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(asyncpg_dsn(admin_url))
    try:
        await admin.execute(f"CREATE DATABASE {name}")
    finally:
        await admin.close()
    url = admin_url.rsplit("/", 1)[0] + f"/{name}"
    connection = await asyncpg.connect(asyncpg_dsn(url))
    try:
        await connection.execute(SCHEMA)
    finally:
        await connection.close()
    try:
        yield url
    finally:
        admin = await asyncpg.connect(asyncpg_dsn(admin_url))
        try:
            await admin.execute(f"DROP DATABASE {name} WITH (FORCE)")
        finally:
            await admin.close()


async def put(url: str, namespace: str, key: str, value: Any, actor: str = "operator") -> None:
    """Write one entry as lib-systemplane's `Set` does (upsert by namespace and key)."""
    connection = await asyncpg.connect(asyncpg_dsn(url))
    try:
        await connection.execute(
            'INSERT INTO systemplane_entries (namespace, "key", value, updated_by) '
            "VALUES ($1, $2, $3::jsonb, $4) ON CONFLICT (namespace, \"key\") DO UPDATE "
            "SET value = EXCLUDED.value, updated_by = EXCLUDED.updated_by, updated_at = now()",
            namespace, key, json.dumps(value), actor)
    finally:
        await connection.close()


async def delete(url: str, namespace: str, key: str) -> None:
    """Remove one entry."""
    connection = await asyncpg.connect(asyncpg_dsn(url))
    try:
        await connection.execute(
            'DELETE FROM systemplane_entries WHERE namespace = $1 AND "key" = $2',
            namespace, key)
    finally:
        await connection.close()
