"""The Lacuna Signer's webhook: wakes the waiting job's workflow (the poll stays the truth)."""

from __future__ import annotations

import contextlib
import logging

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict
from sqlmodel import select

from services.api.context import ApiContext
from shared.auth import keys_match
from shared.contracts.signer import JobStatus, job_workflow_id
from shared.contracts.signer_lacuna import WEBHOOK_SIGNAL, SignerWebhook
from shared.db.signer_models import Job
from shared.errors import ErrorCode, EsteiraError

router = APIRouter(prefix="/api/signer/lacuna", tags=["signer"])
# Self-authenticated (see services/api/auth.py): the Signer's Integration page registers a
# bare URL, so the secret travels in the path and is compared in constant time.
WEBHOOK_PREFIX = "/api/signer/lacuna/webhook/"
log = logging.getLogger("esteira.signer.webhook")


class WebhookData(BaseModel):
    """The part of a Signer webhook we read."""

    model_config = ConfigDict(extra="allow")

    documentId: str  # the Signer's JSON name


class WebhookBody(BaseModel):
    """`{type: DocumentConcluded | DocumentRefused | …, data: {documentId, …}}`."""

    model_config = ConfigDict(extra="allow")

    type: str
    data: WebhookData


@router.post("/webhook/{token}")
async def signer_webhook(token: str, body: WebhookBody, request: Request) -> dict:
    """Signal every AwaitingSigner job of the document; unknown documents are acknowledged."""
    ctx: ApiContext = request.app.state.context
    expected = ctx.settings.signer.webhook_token
    if expected is None or not keys_match(token, expected.get_secret_value()):
        raise EsteiraError(ErrorCode.AUTH_INVALID_KEY, "The webhook token is not valid.")
    async with ctx.sessions() as session:
        job_ids = (await session.exec(select(Job.id).where(
            Job.remote_document_id == body.data.documentId,
            Job.status == JobStatus.AWAITING_SIGNER.value))).all()
    client = await ctx.temporal()
    signaled = 0
    for job_id in job_ids:
        # A workflow that already ended has nothing to wake; the poll covers a lost signal.
        with contextlib.suppress(Exception):
            await client.get_workflow_handle(job_workflow_id(job_id)).signal(
                WEBHOOK_SIGNAL, SignerWebhook(event_type=body.type,
                                              document_id=body.data.documentId))
            signaled += 1
    log.info("Signer webhook %s for document %s woke %s job(s)", body.type,
             body.data.documentId, signaled)
    return {"signaled": signaled}
