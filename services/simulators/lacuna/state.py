"""The simulated Signer's organization: uploads, folders, documents and their flows."""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any


class SignerApiError(Exception):
    """An `ErrorModel` answer: HTTP status, the Signer's code and a message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


@dataclass
class FlowAction:
    """One participant's action: Signer or Approver, its step and its status."""

    type: str
    step: int
    user: dict[str, Any]
    id: str = field(default_factory=lambda: str(uuid.uuid4()))
    status: str = "Pending"
    allow_electronic_signature: bool = False

    def as_json(self) -> dict[str, Any]:
        """The `flowActions[]` entry of document details."""
        return {"id": self.id, "type": self.type, "status": self.status, "step": self.step,
                "user": self.user, "allowElectronicSignature": self.allow_electronic_signature}


@dataclass
class Document:
    """A document: its versions (original first), status and flow."""

    name: str
    filename: str
    content_type: str
    versions: list[bytes]
    flow: list[FlowAction]
    folder_id: str | None = None
    id: str = field(default_factory=lambda: str(uuid.uuid4()))
    status: str = "Pending"
    created: str = field(default_factory=_now)
    updated: str = field(default_factory=_now)
    reason: str | None = None

    def current_step(self) -> int | None:
        """The lowest step that still has a pending action."""
        steps = [a.step for a in self.flow if a.status == "Pending"]
        return min(steps) if steps else None

    def action(self, action_id: str) -> FlowAction:
        """One flow action by id (422 InvalidFlowAction otherwise)."""
        for action in self.flow:
            if action.id == action_id:
                return action
        raise SignerApiError(422, "InvalidFlowAction", f"No flow action {action_id}.")

    def as_json(self) -> dict[str, Any]:
        """`GET /api/documents/{id}`."""
        return {"id": self.id, "name": self.name, "filename": self.filename,
                "mimeType": self.content_type, "status": self.status,
                "folder": {"id": self.folder_id} if self.folder_id else None,
                "creationDate": self.created, "updateDate": self.updated,
                "isConcluded": self.status == "Concluded",
                "flowActions": [a.as_json() for a in self.flow]}


class Organization:
    """Everything one API key sees."""

    def __init__(self, folders: list[str]) -> None:
        self.uploads: dict[str, tuple[str, bytes]] = {}
        self.folders: dict[str, str] = {f: f for f in folders}
        self.documents: dict[str, Document] = {}

    def upload(self, data: bytes, name: str = "upload") -> str:
        """Store bytes; return the upload id."""
        upload_id = str(uuid.uuid4())
        self.uploads[upload_id] = (name, data)
        return upload_id

    def uploaded(self, upload_id: str) -> tuple[str, bytes]:
        """An upload by id (422 otherwise)."""
        if upload_id not in self.uploads:
            raise SignerApiError(422, "UploadNotFound", f"No upload {upload_id}.")
        return self.uploads[upload_id]

    def document(self, document_id: str) -> Document:
        """A document by id (422 DocumentNotFound otherwise)."""
        document = self.documents.get(document_id)
        if document is None:
            raise SignerApiError(422, "DocumentNotFound", f"No document {document_id}.")
        return document

    def create(self, files: list[dict[str, Any]], flow: list[dict[str, Any]],
               folder_id: str | None) -> list[dict[str, str]]:
        """`POST /api/documents`: one document per file, all sharing the flow."""
        if folder_id is not None and folder_id not in self.folders:
            raise SignerApiError(422, "FolderNotFound", f"No folder {folder_id}.")
        if not flow:
            raise SignerApiError(422, "FlowActionsRequired", "A document needs a flow.")
        created = []
        for entry in files:
            _, data = self.uploaded(entry["id"])
            document = Document(
                name=entry.get("displayName") or entry["name"], filename=entry["name"],
                content_type=entry.get("contentType") or "application/octet-stream",
                versions=[data], folder_id=folder_id,
                flow=[FlowAction(type=a.get("type", "Signer"), step=int(a.get("step", 1)),
                                 user=dict(a.get("user") or {}),
                                 allow_electronic_signature=bool(
                                     a.get("allowElectronicSignature", False)))
                      for a in flow])
            self.documents[document.id] = document
            created.append({"uploadId": entry["id"], "documentId": document.id})
        return created

    def complete_action(self, document: Document, action: FlowAction,
                        signed: bytes | None) -> list[str]:
        """Mark an action Completed (with a new version when it signed); return webhook types."""
        self._require_current(document, action)
        action.status = "Completed"
        if signed is not None:
            document.versions.append(signed)
        document.updated = _now()
        events = ["DocumentSigned" if action.type == "Signer" else "DocumentApproved"]
        if document.current_step() is None:
            document.status = "Concluded"
            events.append("DocumentConcluded")
        return events

    def refuse(self, document: Document, action: FlowAction, reason: str) -> list[str]:
        """A participant refuses: the document is Refused."""
        self._require_current(document, action)
        action.status = "Refused"
        document.status = "Refused"
        document.reason = reason
        document.updated = _now()
        return ["DocumentRefused"]

    def cancel(self, document: Document, reason: str) -> list[str]:
        """`POST /api/documents/{id}/cancellation`."""
        if document.status in ("Concluded", "Canceled", "Refused", "Expired"):
            raise SignerApiError(422, "DocumentNotPending",
                                 f"Document {document.id} is {document.status}.")
        document.status = "Canceled"
        document.reason = reason
        document.updated = _now()
        return ["DocumentCanceled"]

    @staticmethod
    def _require_current(document: Document, action: FlowAction) -> None:
        if document.status != "Pending" or action.status != "Pending" \
                or action.step != document.current_step():
            raise SignerApiError(422, "InvalidFlowAction",
                                 f"Action {action.id} is not pending on document {document.id}.")


def decode_base64(value: str) -> bytes:
    """Base64 from a JSON body (422 when it isn't)."""
    try:
        return base64.b64decode(value, validate=True)
    except (ValueError, TypeError):
        raise SignerApiError(422, "InvalidBytes", "bytes is not valid base64.") from None
