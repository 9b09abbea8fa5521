"""The LacunaSigner dispatch checkpoints: what a dispatch had done when its worker was lost."""

from __future__ import annotations

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.models.lacuna import SignerDispatch


def document_name(file_name: str, job_id: str) -> str:
    """The Signer document's name: the file's, tagged with the job id the search finds."""
    return f"{file_name} [esteira {job_id}]"


class DispatchLog:
    """One checkpoint row per dispatching job, written before and after each remote call."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.sessions = sessions

    async def get(self, job_id: str) -> SignerDispatch | None:
        """The checkpoint of a job (None: its dispatch never started)."""
        async with self.sessions() as session:
            return await session.get(SignerDispatch, job_id)

    async def start(self, job_id: str, name: str) -> tuple[SignerDispatch, bool]:
        """The checkpoint before the first remote call, and whether it is new (an existing
        one, left by a worker lost before its signing checkpoint, is kept)."""
        async with self.sessions() as session:
            row = await session.get(SignerDispatch, job_id)
            if row is not None:
                return row, False
            row = SignerDispatch(job_id=job_id, document_name=name)
            session.add(row)
            await session.commit()
            await session.refresh(row)
            return row, True

    async def record(self, job_id: str, **fields: str) -> None:
        """Store an upload or document id the moment the Signer returns it."""
        async with self.sessions() as session:
            row = await session.get(SignerDispatch, job_id)
            if row is not None:
                for key, value in fields.items():
                    setattr(row, key, value)
                session.add(row)
                await session.commit()

    async def forget(self, job_id: str) -> None:
        """Drop the checkpoint once the job waits in AwaitingSigner (the job row holds it)."""
        async with self.sessions() as session:
            await session.exec(delete(SignerDispatch).where(SignerDispatch.job_id == job_id))
            await session.commit()
