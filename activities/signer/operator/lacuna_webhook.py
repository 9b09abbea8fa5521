"""The Lacuna Signer's webhook: wake each job waiting on the document (the poll stays the truth)."""

from __future__ import annotations

import contextlib

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio.client import Client

from shared.contracts.signer import JobStatus, job_workflow_id
from shared.contracts.signer_lacuna import SignerWebhook
from shared.contracts.signer_names import WEBHOOK_SIGNAL
from shared.db.signer_models import Job


async def wake_waiting_jobs(sessions: async_sessionmaker[AsyncSession], client: Client, *,
                            event_type: str, document_id: str) -> int:
    """Signal every AwaitingSigner job of the document; how many were signaled."""
    async with sessions() as session:
        job_ids = (await session.exec(select(Job.id).where(
            Job.remote_document_id == document_id,
            Job.status == JobStatus.AWAITING_SIGNER.value))).all()
    signaled = 0
    for job_id in job_ids:
        # A workflow that already ended has nothing to wake; the poll covers a lost signal.
        with contextlib.suppress(Exception):
            await client.get_workflow_handle(job_workflow_id(job_id)).signal(
                WEBHOOK_SIGNAL, SignerWebhook(event_type=event_type, document_id=document_id))
            signaled += 1
    return signaled
