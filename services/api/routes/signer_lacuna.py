"""The Lacuna Signer's webhook: wakes the waiting job's workflow (the poll stays the truth)."""

from __future__ import annotations

import logging

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict

from activities.signer.operator.lacuna_webhook import wake_waiting_jobs
from services.app_context import ContextDep
from shared.auth import keys_match
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
async def signer_webhook(token: str, body: WebhookBody, ctx: ContextDep) -> dict:
    """Signal every AwaitingSigner job of the document; unknown documents are acknowledged."""
    expected = ctx.settings.signer.webhook_token
    if expected is None or not keys_match(token, expected.get_secret_value()):
        raise EsteiraError(ErrorCode.AUTH_INVALID_KEY, "The webhook token is not valid.")
    signaled = await wake_waiting_jobs(ctx.sessions, await ctx.temporal(),
                                       event_type=body.type, document_id=body.data.documentId)
    log.info("Signer webhook %s for document %s woke %s job(s)", body.type,
             body.data.documentId, signaled)
    return {"signaled": signaled}
