"""The Lacuna Signer's webhook: wakes the waiting job's workflow (the poll stays the truth)."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict

from services.app_context import SignerFace
from shared.wire import WireModel

router = APIRouter(prefix="/api/signer/lacuna", tags=["signer"])
# Self-authenticated (see services/api/auth.py): the Signer's Integration page registers a
# bare URL, so the secret travels in the path (compared in constant time by the face).
WEBHOOK_PREFIX = "/api/signer/lacuna/webhook/"


class WebhookData(BaseModel):
    """The part of a Signer webhook we read (the Signer's own shape)."""

    model_config = ConfigDict(extra="allow")

    documentId: str  # the Signer's JSON name


class WebhookBody(BaseModel):
    """`{type: DocumentConcluded | DocumentRefused | …, data: {documentId, …}}`."""

    model_config = ConfigDict(extra="allow")

    type: str
    data: WebhookData


class Woken(WireModel):
    """How many waiting jobs the webhook woke (0 for a document no job waits on)."""

    signaled: int


@router.post("/webhook/{token}", response_model=Woken)
async def signer_webhook(token: str, body: WebhookBody, signer: SignerFace) -> Woken:
    """Signal every AwaitingSigner job of the document; unknown documents are acknowledged."""
    return Woken(signaled=await signer.lacuna.wake(token, event_type=body.type,
                                                   document_id=body.data.documentId))
