"""The Lacuna Signer's webhook: wake each job waiting on the document (the poll stays the truth)."""

from __future__ import annotations

import contextlib
import logging

from sqlmodel import select

from activities.signer.contracts.jobs import JobStatus, job_workflow_id
from activities.signer.contracts.lacuna import SignerWebhook
from activities.signer.contracts.names import WEBHOOK_SIGNAL
from activities.signer.models.jobs import Job
from shared.auth import keys_match
from shared.db.engine import Sessions
from shared.errors import ErrorCode, EsteiraError
from shared.settings import Settings
from shared.temporal import TemporalHandle

log = logging.getLogger("esteira.signer.webhook")


class SignerLacunaWebhook:
    """The webhook the Signer's Integration page registers (its secret is in the URL)."""

    def __init__(self, settings: Settings, sessions: Sessions, temporal: TemporalHandle) -> None:
        self._settings = settings
        self._sessions = sessions
        self._temporal = temporal

    async def wake(self, token: str, *, event_type: str, document_id: str) -> int:
        """Signal every AwaitingSigner job of the document; how many were signaled (an
        unknown document wakes none). A token other than `Signer:WebhookToken` is refused."""
        expected = self._settings.signer.webhook_token
        # Compared in constant time: the token is the webhook's only credential.
        if expected is None or not keys_match(token, expected.get_secret_value()):
            raise EsteiraError(ErrorCode.AUTH_INVALID_KEY, "The webhook token is not valid.")
        async with self._sessions() as session:
            job_ids = (await session.exec(select(Job.id).where(
                Job.remote_document_id == document_id,
                Job.status == JobStatus.AWAITING_SIGNER.value))).all()
        signaled = 0
        if job_ids:
            client = await self._temporal()
            for job_id in job_ids:
                # A workflow that already ended has nothing to wake; the poll covers a lost
                # signal.
                with contextlib.suppress(Exception):
                    await client.get_workflow_handle(job_workflow_id(job_id)).signal(
                        WEBHOOK_SIGNAL,
                        SignerWebhook(event_type=event_type, document_id=document_id))
                    signaled += 1
        log.info("Signer webhook %s for document %s woke %s job(s)", event_type, document_id,
                 signaled)
        return signaled
