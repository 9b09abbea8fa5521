"""A small async client of the Lacuna Signer REST API (the shapes of research §1.5)."""

from __future__ import annotations

import base64
from typing import Any

import httpx

from shared.settings import Settings


class SignerUnavailable(Exception):
    """The Signer could not be reached, timed out or answered 5xx: worth trying again."""


class SignerRefused(Exception):
    """The Signer answered 4xx with an `ErrorModel`: the request itself is wrong."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


class LacunaClient:
    """`X-Api-Key` authenticated calls; errors become SignerUnavailable / SignerRefused."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    @classmethod
    def from_settings(cls, settings: Settings) -> LacunaClient:
        """A client for `Signer:Url` with `Signer:ApiKey` (the caller closes `.http`)."""
        signer = settings.signer
        key = signer.api_key.get_secret_value() if signer.api_key else ""
        return cls(httpx.AsyncClient(base_url=signer.url or "", headers={"X-Api-Key": key},
                                     timeout=signer.request_timeout_seconds))

    async def _call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = await self.http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise SignerUnavailable(f"{method} {path}: {type(exc).__name__}") from None
        if response.status_code >= 500:
            raise SignerUnavailable(f"{method} {path}: HTTP {response.status_code}")
        if response.status_code >= 400:
            try:
                body = response.json()
            except ValueError:
                body = {}
            raise SignerRefused(response.status_code, str(body.get("code") or "Error"),
                                str(body.get("message") or response.text[:200]))
        return response

    async def upload(self, data: bytes, name: str) -> str:
        """`POST /api/uploads/bytes`; the upload id."""
        response = await self._call("POST", "/api/uploads/bytes",
                                    json={"bytes": base64.b64encode(data).decode(),
                                          "name": name})
        return response.json()["id"]

    async def create_document(self, *, upload_id: str, name: str, content_type: str,
                              flow: list[dict[str, Any]], display_name: str | None = None) -> str:
        """`POST /api/documents` with one file; the document id."""
        response = await self._call("POST", "/api/documents", json={
            "files": [{"displayName": display_name or name, "id": upload_id, "name": name,
                       "contentType": content_type}],
            "flowActions": flow})
        return response.json()[0]["documentId"]

    async def find_documents(self, name: str) -> list[dict[str, Any]]:
        """Documents named exactly `name` (`GET /api/documents?q=`; the search is the Signer's,
        the exact-name filter ours: `q` may also match other fields)."""
        page = (await self._call("GET", "/api/documents",
                                 params={"q": name, "limit": 100})).json()
        return [d for d in page["items"] if d.get("name") == name]

    async def document(self, document_id: str) -> dict[str, Any]:
        """`GET /api/documents/{id}`."""
        return (await self._call("GET", f"/api/documents/{document_id}")).json()

    async def content(self, document_id: str, kind: str = "Signatures") -> bytes:
        """`GET /api/documents/{id}/content?type=`."""
        return (await self._call("GET", f"/api/documents/{document_id}/content",
                                 params={"type": kind})).content

    async def cancel(self, document_id: str, reason: str) -> None:
        """`POST /api/documents/{id}/cancellation`."""
        await self._call("POST", f"/api/documents/{document_id}/cancellation",
                         json={"reason": reason})

    async def folder_documents(self, folder_id: str) -> list[dict[str, Any]]:
        """Pending documents of a folder (`GET /api/documents?folderId=`), every page."""
        documents: list[dict[str, Any]] = []
        while True:
            page = (await self._call("GET", "/api/documents", params={
                "folderId": folder_id, "status": "Pending", "limit": 100,
                "offset": len(documents)})).json()
            documents += page["items"]
            if not page["items"] or len(documents) >= page["totalCount"]:
                return documents

    async def submit_signature(self, document_id: str, flow_action_id: str, *,
                               upload_id: str, identifier: str) -> None:
        """Hand this host's signed version of a document to its flow action."""
        await self._call("POST", f"/api/documents/{document_id}/flow-actions/"
                                 f"{flow_action_id}/signature",
                         json={"uploadId": upload_id, "identifier": identifier})
