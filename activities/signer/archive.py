"""The archive of B-LTA outputs: a registry row per file, renewed before its timestamp expires.

A completed B-LTA job copies its output to `archive/<name>` and records the file, its level,
its document-timestamp count and the expiry of the TSA certificate behind the newest one.
The renewal writes a new revision (an incremental update: every earlier revision stays in the
file) under the same name. It is keyed on the timestamp count the workflow saw: a file
already ahead of that count was renewed before (a replay) and gets nothing more.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
from concurrent.futures import Executor
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select, update
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio import activity

from activities.signer.contracts.archive import (
    ARCHIVE_DIR,
    DUE_ARCHIVES_ACTIVITY,
    RENEW_ARCHIVE_ACTIVITY,
    DueArchive,
    DueArchivesResult,
    RenewArchiveInput,
    RenewArchiveResult,
    RenewArchivesInput,
)
from activities.signer.engine import RenewRequest, renew
from activities.signer.level_config import tsa_endpoints
from activities.signer.models.jobs import ArchivedOutput, SigningProfile
from shared.db.models import OperationalEvent, utcnow

log = logging.getLogger("esteira.signer.archive")


def timestamp_count(path: Path) -> int:
    """Document timestamps in a PDF (what a renewal adds one of)."""
    from io import BytesIO

    from pyhanko.pdf_utils.reader import PdfFileReader

    return len(PdfFileReader(BytesIO(path.read_bytes()), strict=False)
               .embedded_timestamp_signatures)


def _aware(moment: datetime) -> datetime:
    # SQLite hands back naive datetimes; the store writes UTC.
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class ArchiveRegistry:
    """The `signer_archive` rows and the `archive/` tree they describe."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], storage_root: Path) -> None:
        self.sessions = sessions
        self.root = storage_root / ARCHIVE_DIR

    async def register(self, *, output: Path, job_id: str, profile: str, level: str,
                       expires_at: datetime) -> Path:
        """Copy a completed output into the archive and record it (a retry finds it there)."""
        target = self.root / output.name
        await asyncio.to_thread(self._copy, output, target)
        async with self.sessions() as session:
            row = await session.get(ArchivedOutput, output.name)
            if row is not None and row.job_id == job_id:
                return target
            row = row or ArchivedOutput(name=output.name, path=str(target), level=level,
                                        tsa_expires_at=expires_at)
            row.job_id, row.profile_name, row.level = job_id, profile, level
            row.path, row.timestamps, row.tsa_expires_at = str(target), 1, expires_at
            row.renewed_at, row.last_error, row.updated_at = None, None, utcnow()
            session.add(row)
            await session.commit()
        return target

    def _copy(self, output: Path, target: Path) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.copying")
        shutil.copyfile(output, partial)
        os.replace(partial, target)

    async def due(self, margin: timedelta, limit: int) -> list[ArchivedOutput]:
        """Rows whose TSA certificate expires within `margin`, the soonest first."""
        async with self.sessions() as session:
            return list((await session.exec(
                select(ArchivedOutput).where(ArchivedOutput.tsa_expires_at <= utcnow() + margin)
                .order_by(ArchivedOutput.tsa_expires_at).limit(limit))).all())

    async def oldest_expiry(self) -> datetime | None:
        """The soonest TSA certificate expiry in the archive (None: nothing archived)."""
        async with self.sessions() as session:
            row = (await session.exec(select(ArchivedOutput.tsa_expires_at)
                                      .order_by(ArchivedOutput.tsa_expires_at).limit(1))).first()
        return _aware(row) if row is not None else None

    async def record(self, name: str, seen: int, *, timestamps: int, expires_at: datetime | None,
                     event: OperationalEvent) -> bool:
        """Move the row from `seen` timestamps to `timestamps`, once, with its event."""
        async with self.sessions() as session:
            values: dict = {"timestamps": timestamps, "renewed_at": utcnow(),
                            "updated_at": utcnow(), "last_error": None}
            if expires_at is not None:
                values["tsa_expires_at"] = expires_at
            moved = await session.exec(update(ArchivedOutput).where(
                ArchivedOutput.name == name, ArchivedOutput.timestamps == seen).values(**values))
            if not moved.rowcount:
                return False
            session.add(event)
            await session.commit()
        return True

    async def failed(self, name: str, message: str) -> None:
        """Keep why the last renewal of `name` failed (the next pass tries again)."""
        async with self.sessions() as session:
            await session.exec(update(ArchivedOutput).where(ArchivedOutput.name == name)
                               .values(last_error=message, updated_at=utcnow()))
            await session.commit()


class ArchiveActivities:
    """The renewal's steps; the file work runs in the signing processes."""

    def __init__(self, registry: ArchiveRegistry, pool: Executor, instance_id: str) -> None:
        self.registry = registry
        self.pool = pool
        self.instance_id = instance_id

    @activity.defn(name=DUE_ARCHIVES_ACTIVITY)
    async def due(self, request: RenewArchivesInput) -> DueArchivesResult:
        """What expires within the margin."""
        rows = await self.registry.due(timedelta(seconds=request.margin_seconds),
                                       request.max_per_run)
        return DueArchivesResult(due=[DueArchive(name=r.name, timestamps=r.timestamps)
                                      for r in rows])

    @activity.defn(name=RENEW_ARCHIVE_ACTIVITY)
    async def renew(self, request: RenewArchiveInput) -> RenewArchiveResult:
        """Add a document timestamp to one archived file, unless that was done already."""
        async with self.registry.sessions() as session:
            row = await session.get(ArchivedOutput, request.name)
            profile = await session.get(SigningProfile, row.profile_name or "") if row else None
        if row is None or row.timestamps != request.timestamps:
            return RenewArchiveResult(name=request.name, replayed=True,
                                      message="already renewed (or no longer archived)")
        path = Path(row.path)
        in_file = await asyncio.to_thread(timestamp_count, path)
        if in_file > row.timestamps:
            # The file was renewed and the row not yet: record it, add nothing.
            return await self._recorded(row, in_file, None, "recorded an earlier renewal",
                                        replayed=True)
        if profile is None or not profile.timestamp:
            message = (f"profile {row.profile_name} is gone or has no TSA: "
                       f"{request.name} can't be renewed")
            await self.registry.failed(request.name, message)
            return RenewArchiveResult(name=request.name, error_code="profile.not-found",
                                      message=message)
        target = path.with_name(f".{path.name}.renewing")
        loop = asyncio.get_running_loop()
        outcome = await loop.run_in_executor(self.pool, renew, RenewRequest(
            source=str(path), target=str(target), tsa=tsa_endpoints(profile.timestamp),
            tsa_hash_algorithm=profile.timestamp.get("hash_algorithm", "sha256"),
            trust_roots=tuple(profile.trust_roots),
            revocation_timeout=profile.revocation_timeout_seconds))
        if not outcome.ok:
            await self.registry.failed(request.name, f"{outcome.code}: {outcome.message}")
            log.warning("Archive renewal of %s failed (%s): %s", request.name, outcome.code,
                        outcome.message)
            return RenewArchiveResult(name=request.name, error_code=outcome.code,
                                      message=outcome.message)
        await asyncio.to_thread(os.replace, target, path)
        expires = datetime.fromisoformat(outcome.archive_expiry) if outcome.archive_expiry \
            else None
        return await self._recorded(row, row.timestamps + 1, expires, outcome.message)

    async def _recorded(self, row: ArchivedOutput, timestamps: int, expires: datetime | None,
                        detail: str, *, replayed: bool = False) -> RenewArchiveResult:
        if expires is None:
            from activities.signer.crypto.ltv import last_timestamp_expiry

            expires = await asyncio.to_thread(
                lambda: last_timestamp_expiry(Path(row.path).read_bytes()))
        event = OperationalEvent(
            domain="signer", type="ArchiveRenewed", actor=self.instance_id,
            message=f"Archived {row.name} renewed: document timestamp {timestamps} "
                    f"({detail}); next expiry {expires.isoformat() if expires else 'unknown'}.",
            properties={"name": row.name, "path": row.path, "timestamps": timestamps,
                        "tsaExpiresAt": expires.isoformat() if expires else None})
        recorded = await self.registry.record(row.name, row.timestamps, timestamps=timestamps,
                                              expires_at=expires, event=event)
        return RenewArchiveResult(name=row.name, renewed=recorded and not replayed,
                                  replayed=replayed or not recorded, message=detail,
                                  tsa_expires_at=expires.isoformat() if expires else None)
