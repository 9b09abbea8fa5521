"""App factory and process entry point of the Lacuna Signer REST API simulator."""

from __future__ import annotations

import asyncio
import hmac
import logging
from pathlib import Path
from typing import Annotated, Any

import httpx
import uvicorn
from fastapi import Body, FastAPI, Query, Request, UploadFile
from fastapi.responses import JSONResponse, Response

from services.simulators.lacuna.participant_pki import ParticipantPki
from services.simulators.lacuna.participants import sign_version, sign_with
from services.simulators.lacuna.settings import LacunaSimSettings
from services.simulators.lacuna.state import Organization, SignerApiError, decode_base64

log = logging.getLogger("esteira.sim.lacuna")
JsonBody = Annotated[dict, Body()]
OptionalBody = Annotated[dict | None, Body()]
CONTENT_TYPES = {"Original", "PrinterFriendlyVersion", "Signatures", "OriginalWithMarks",
                 "SigningTags", "SignatureMarks"}


class Faults:
    """Injected faults: the next `count` matching requests get a status or a delay."""

    def __init__(self) -> None:
        self.rules: list[dict[str, Any]] = []

    def match(self, method: str, path: str) -> dict[str, Any] | None:
        """The first rule matching this request, spending one of its uses."""
        for rule in self.rules:
            if rule["method"] in ("*", method) and path.startswith(rule["path"]):
                rule["count"] -= 1
                if rule["count"] <= 0:
                    self.rules.remove(rule)
                return rule
        return None


def create_app(settings: LacunaSimSettings | None = None) -> FastAPI:
    """A simulated Signer organization; `app.state.org` is its in-memory state."""
    settings = settings or LacunaSimSettings()
    org = Organization([f for f in settings.folders.split(",") if f])
    faults = Faults()
    webhooks: list[dict[str, Any]] = []
    app = FastAPI(title="Lacuna Signer simulator")
    app.state.org, app.state.faults, app.state.webhooks = org, faults, webhooks
    # Made once per process, only when participants sign with their own certificates.
    participants = ParticipantPki(
        Path(settings.participant_ca_dir) if settings.participant_ca_dir else None
    ) if settings.participant_certificates == "own" else None

    @app.exception_handler(SignerApiError)
    async def signer_error(_: Request, exc: SignerApiError) -> JSONResponse:
        return JSONResponse({"code": exc.code, "message": exc.message}, status_code=exc.status)

    @app.middleware("http")
    async def auth_and_faults(request: Request, call_next):
        if request.url.path.startswith("/api/"):
            presented = request.headers.get("X-Api-Key", "")
            if not hmac.compare_digest(presented.encode(), settings.api_key.encode()):
                return JSONResponse({"code": "Unauthorized", "message": "Invalid API key."},
                                    status_code=401)
            rule = faults.match(request.method, request.url.path)
            if rule is not None:
                if rule.get("delay_seconds"):
                    await asyncio.sleep(rule["delay_seconds"])
                if rule.get("status"):
                    return JSONResponse({"code": "SimulatedFault",
                                         "message": "Injected by the simulator."},
                                        status_code=rule["status"])
        return await call_next(request)

    async def notify(document_id: str, events: list[str]) -> None:
        for event in events:
            payload = {"type": event, "data": {"documentId": document_id}}
            webhooks.append(payload)
            if settings.webhook_url:
                try:
                    async with httpx.AsyncClient(
                            timeout=settings.webhook_timeout_seconds) as client:
                        await client.post(settings.webhook_url, json=payload)
                except httpx.HTTPError as exc:
                    log.warning("Webhook %s to %s failed: %s", event, settings.webhook_url, exc)

    @app.post("/api/uploads/bytes")
    async def upload_bytes(body: JsonBody) -> dict:
        return {"id": org.upload(decode_base64(body.get("bytes", "")), body.get("name", ""))}

    @app.post("/api/uploads")
    async def upload_multipart(file: UploadFile) -> dict:
        return {"id": org.upload(await file.read(), file.filename or "upload")}

    @app.post("/api/documents")
    async def create_documents(body: JsonBody) -> list[dict]:
        return org.create(body.get("files") or [], body.get("flowActions") or [],
                          body.get("folderId"))

    @app.get("/api/documents")
    async def list_documents(folderId: str | None = None, status: str | None = None,
                             q: str | None = None, limit: int = 100, offset: int = 0) -> dict:
        if folderId is not None and folderId not in org.folders:
            raise SignerApiError(422, "FolderNotFound", f"No folder {folderId}.")
        # `Q` of the real API ("query to filter items"): here a case-insensitive name search.
        items = [d for d in org.documents.values()
                 if (folderId is None or d.folder_id == folderId)
                 and (status is None or d.status == status)
                 and (q is None or q.lower() in d.name.lower())]
        return {"items": [d.as_json() for d in items[offset:offset + limit]],
                "totalCount": len(items)}

    @app.get("/api/documents/{document_id}")
    async def document_details(document_id: str) -> dict:
        return org.document(document_id).as_json()

    @app.get("/api/documents/{document_id}/content")
    async def content(document_id: str, type: str = Query("Original")) -> Response:
        if type not in CONTENT_TYPES:
            raise SignerApiError(422, "InvalidContentType", f"Unknown content type {type}.")
        document = org.document(document_id)
        data = document.versions[0] if type in ("Original", "OriginalWithMarks") \
            else document.versions[-1]
        return Response(data, media_type=document.content_type)

    @app.post("/api/documents/{document_id}/cancellation")
    async def cancellation(document_id: str, body: OptionalBody = None) -> Response:
        events = org.cancel(org.document(document_id), (body or {}).get("reason") or "")
        await notify(document_id, events)
        return Response(status_code=200)

    @app.post("/api/documents/{document_id}/flow-actions/{action_id}/signature")
    async def sign_by_api(document_id: str, action_id: str, body: JsonBody) -> Response:
        # Server-side signing by this host's certificate (SignerFolder); the request shape is
        # the simulator's: Lacuna's public documents don't describe this call's body.
        document = org.document(document_id)
        action = document.action(action_id)
        if body.get("identifier") != action.user.get("identifier"):
            raise SignerApiError(422, "CpfMismatch",
                                 "The certificate's CPF is not this action's participant.")
        _, signed = org.uploaded(body.get("uploadId", ""))
        await notify(document_id, org.complete_action(document, action, signed))
        return Response(status_code=200)

    @app.get("/api/folders/{folder_id}")
    async def folder(folder_id: str) -> dict:
        if folder_id not in org.folders:
            raise SignerApiError(422, "FolderNotFound", f"No folder {folder_id}.")
        return {"id": folder_id, "name": org.folders[folder_id]}

    # ---- simulator controls (what people and the organization do) -------------------------
    @app.post("/_sim/folders/{folder_id}")
    async def add_folder(folder_id: str) -> dict:
        org.folders[folder_id] = folder_id
        return {"id": folder_id}

    @app.delete("/_sim/folders/{folder_id}")
    async def remove_folder(folder_id: str) -> Response:
        org.folders.pop(folder_id, None)
        return Response(status_code=204)

    @app.post("/_sim/documents")
    async def seed_document(body: JsonBody) -> dict:
        upload_id = org.upload(decode_base64(body["contentBase64"]), body["filename"])
        created = org.create([{"id": upload_id, "name": body["filename"],
                               "contentType": body.get("contentType")}],
                             body["flowActions"], body.get("folderId"))
        return org.document(created[0]["documentId"]).as_json()

    @app.post("/_sim/documents/{document_id}/actions/{action_id}/sign")
    async def participant_signs(document_id: str, action_id: str) -> dict:
        document = org.document(document_id)
        action = document.action(action_id)
        signed = None
        if action.type == "Signer" and participants is not None:
            pfx = await asyncio.to_thread(participants.pfx_for, action.user)
            signed = await asyncio.to_thread(sign_with, pfx, None, document.filename,
                                             document.versions[-1])
        elif action.type == "Signer":
            signed = await asyncio.to_thread(sign_version, settings, document.filename,
                                             document.versions[-1])
        await notify(document_id, org.complete_action(document, action, signed))
        return document.as_json()

    @app.post("/_sim/documents/{document_id}/actions/{action_id}/refuse")
    async def participant_refuses(document_id: str, action_id: str,
                                  body: OptionalBody = None) -> dict:
        document = org.document(document_id)
        await notify(document_id, org.refuse(document, document.action(action_id),
                                             (body or {}).get("reason") or "Refused."))
        return document.as_json()

    @app.post("/_sim/documents/{document_id}/expire")
    async def expire(document_id: str) -> dict:
        document = org.document(document_id)
        document.status = "Expired"
        return document.as_json()

    @app.post("/_sim/faults")
    async def add_fault(body: JsonBody) -> dict:
        rule = {"method": body.get("method", "*"), "path": body.get("path", "/api/"),
                "status": body.get("status"), "delay_seconds": body.get("delay_seconds"),
                "count": int(body.get("count", 1))}
        faults.rules.append(rule)
        return rule

    @app.get("/_sim/ca.pem")
    async def participants_ca() -> Response:
        if participants is None:
            raise SignerApiError(404, "NoParticipantCa",
                                 "Participants sign with the shared PFX (participant_"
                                 "certificates=shared).")
        return Response(participants.ca_pem(), media_type="application/x-pem-file")

    @app.get("/_sim/webhooks")
    async def sent_webhooks() -> list[dict]:
        return webhooks

    return app


def main(host: str | None = None, port: int | None = None) -> None:
    """Serve the simulator with uvicorn; settings come from `LACUNA_SIM_*`."""
    settings = LacunaSimSettings()
    uvicorn.run(create_app(settings), host=host or settings.host,
                port=port if port is not None else settings.port)
