"""`POST /api/files` stops reading at the size limit, before the form parser spools the body."""

from __future__ import annotations

from collections.abc import Callable

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from activities.signer.operator import SignerOperations
from shared.errors import EsteiraError
from shared.problem import refusal

UPLOAD_PATH = "/api/files"
CONTENT_LENGTH = b"content-length"


class BodyRefused(HTTPException):
    """A body refused while it streams in; the app's HTTP error handler answers `error`."""

    def __init__(self, error: EsteiraError) -> None:
        super().__init__(error.status, error.message)
        self.error = error


class UploadLimit:
    """Refuse an upload body past `Upload:MaxBytes` (and its multipart framing) with the
    signer's `upload.too-large`: at once when Content-Length says so, else as soon as the
    bytes read pass it, whatever Content-Length claimed (or when it is absent)."""

    def __init__(self, app: ASGIApp, signer: Callable[[], SignerOperations]) -> None:
        self.app = app
        self._signer = signer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" \
                or scope["path"].rstrip("/") != UPLOAD_PATH:
            await self.app(scope, receive, send)
            return
        intake = self._signer().intake
        cap = intake.body_limit
        declared = dict(scope["headers"]).get(CONTENT_LENGTH)
        if declared is not None and declared.isdigit() and int(declared) > cap:
            # Nothing is read: the client learns before sending the rest.
            await refusal(intake.too_large())(scope, receive, send)
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > cap:
                    raise BodyRefused(intake.too_large())
            return message

        await self.app(scope, counted, send)
