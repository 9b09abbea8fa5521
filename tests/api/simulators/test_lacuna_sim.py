"""The Lacuna Signer simulator over real HTTP: shapes, participants, faults."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from cryptography import x509

from activities.signer.crypto.samples import make_pdf
from activities.signer.crypto.verify import verify_pades
from activities.signer.lacuna.client import LacunaClient, SignerRefused, SignerUnavailable
from services.simulators.lacuna import LacunaSimSettings, create_app
from tests.support.lacuna import SIM_KEY
from tests.support.sisbajud import serve

FLOW = [{"type": "Signer", "step": 1, "user": {"name": "A", "identifier": "11111111111",
                                                "email": "a@example.com"}},
        {"type": "Approver", "step": 2, "user": {"name": "B", "identifier": "22222222222",
                                                  "email": "b@example.com"}}]


@pytest.fixture
def sim(dev_pki: Path) -> Iterator[str]:
    settings = LacunaSimSettings(api_key=SIM_KEY, pfx_path=str(dev_pki / "signer.pfx"),
                                 pfx_password_file=str(dev_pki / "signer.password"),
                                 folders="legal")
    with serve(create_app(settings)) as url:
        yield url


def _client(url: str, key: str = SIM_KEY, timeout: float = 10) -> LacunaClient:
    return LacunaClient(httpx.AsyncClient(base_url=url, headers={"X-Api-Key": key},
                                          timeout=timeout))


async def _create(client: LacunaClient, data: bytes) -> str:
    upload_id = await client.upload(data, "doc.pdf")
    return await client.create_document(upload_id=upload_id, name="doc.pdf",
                                        content_type="application/pdf", flow=FLOW)


async def test_upload_create_and_document_details_have_the_signer_shapes(sim):
    async with httpx.AsyncClient(base_url=sim, headers={"X-Api-Key": SIM_KEY}) as http:
        upload = (await http.post("/api/uploads/bytes", json={
            "bytes": base64.b64encode(b"%PDF-1.4 x").decode()})).json()
        created = (await http.post("/api/documents", json={
            "files": [{"displayName": "Contrato", "id": upload["id"], "name": "c.pdf",
                       "contentType": "application/pdf"}], "flowActions": FLOW})).json()
        assert created == [{"uploadId": upload["id"], "documentId": created[0]["documentId"]}]
        details = (await http.get(f"/api/documents/{created[0]['documentId']}")).json()
        original = await http.get(f"/api/documents/{details['id']}/content",
                                  params={"type": "Original"})
        bad_type = await http.get(f"/api/documents/{details['id']}/content",
                                  params={"type": "Everything"})
    assert details["status"] == "Pending" and details["name"] == "Contrato"
    assert [(a["type"], a["step"], a["status"]) for a in details["flowActions"]] == [
        ("Signer", 1, "Pending"), ("Approver", 2, "Pending")]
    assert original.content == b"%PDF-1.4 x"
    assert bad_type.status_code == 422 and bad_type.json()["code"] == "InvalidContentType"


async def test_wrong_api_key_is_401_and_unknown_document_is_422(sim):
    with pytest.raises(SignerRefused) as refused:
        await _client(sim, key="app|wrong").document("x")
    assert refused.value.status == 401
    with pytest.raises(SignerRefused) as missing:
        await _client(sim).document("nope")
    assert (missing.value.status, missing.value.code) == (422, "DocumentNotFound")


async def test_participants_sign_in_step_order_and_the_document_concludes(sim, dev_pki):
    client = _client(sim)
    document_id = await _create(client, make_pdf(10_000, pages=1))
    signer, approver = (await client.document(document_id))["flowActions"]
    async with httpx.AsyncClient(base_url=sim) as http:
        early = await http.post(f"/_sim/documents/{document_id}/actions/{approver['id']}/sign")
        assert early.status_code == 422 and early.json()["code"] == "InvalidFlowAction"
        await http.post(f"/_sim/documents/{document_id}/actions/{signer['id']}/sign")
        assert (await client.document(document_id))["status"] == "Pending"
        await http.post(f"/_sim/documents/{document_id}/actions/{approver['id']}/sign")
        webhooks = (await http.get("/_sim/webhooks")).json()
    assert (await client.document(document_id))["status"] == "Concluded"
    assert [w["type"] for w in webhooks] == ["DocumentSigned", "DocumentApproved",
                                             "DocumentConcluded"]
    signed = await client.content(document_id, "Signatures")
    root = x509.load_pem_x509_certificate((dev_pki / "ca.pem").read_bytes())
    assert (await asyncio.to_thread(verify_pades, signed, trust_roots=[root])).ok
    with pytest.raises(SignerRefused) as late:
        await client.cancel(document_id, "too late")
    assert late.value.code == "DocumentNotPending"


async def test_refusal_and_cancellation_end_the_document(sim):
    client = _client(sim)
    refused = await _create(client, b"%PDF-1.4 r")
    canceled = await _create(client, b"%PDF-1.4 c")
    action = (await client.document(refused))["flowActions"][0]["id"]
    async with httpx.AsyncClient(base_url=sim) as http:
        await http.post(f"/_sim/documents/{refused}/actions/{action}/refuse",
                        json={"reason": "no"})
    await client.cancel(canceled, "operator")
    assert (await client.document(refused))["status"] == "Refused"
    assert (await client.document(canceled))["status"] == "Canceled"


async def test_folders_list_pending_documents_and_a_missing_folder_is_422(sim):
    client = _client(sim)
    async with httpx.AsyncClient(base_url=sim) as http:
        seeded = (await http.post("/_sim/documents", json={
            "folderId": "legal", "filename": "t.pdf", "flowActions": FLOW,
            "contentBase64": base64.b64encode(b"%PDF").decode()})).json()
    listed = await client.folder_documents("legal")
    assert [d["id"] for d in listed] == [seeded["id"]]
    with pytest.raises(SignerRefused) as gone:
        await client.folder_documents("nowhere")
    assert gone.value.code == "FolderNotFound"


async def test_signature_by_api_checks_the_cpf_of_the_action(sim):
    client = _client(sim)
    document_id = await _create(client, b"%PDF-1.4 s")
    action = (await client.document(document_id))["flowActions"][0]["id"]
    upload_id = await client.upload(b"%PDF-1.4 signed", "s.pdf")
    with pytest.raises(SignerRefused) as mismatch:
        await client.submit_signature(document_id, action, upload_id=upload_id,
                                      identifier="99999999999")
    assert mismatch.value.code == "CpfMismatch"
    await client.submit_signature(document_id, action, upload_id=upload_id,
                                  identifier="11111111111")
    assert await client.content(document_id, "Signatures") == b"%PDF-1.4 signed"


async def test_faults_give_5xx_and_timeouts_that_the_client_reports_as_unavailable(sim):
    client = _client(sim, timeout=0.3)
    async with httpx.AsyncClient(base_url=sim) as http:
        await http.post("/_sim/faults", json={"path": "/api/documents/", "status": 503})
        await http.post("/_sim/faults", json={"path": "/api/documents/", "delay_seconds": 1})
    with pytest.raises(SignerUnavailable, match="HTTP 503"):
        await client.document("x")
    with pytest.raises(SignerUnavailable, match="Timeout"):
        await client.document("x")
    with pytest.raises(SignerRefused):  # faults spent: a normal answer again
        await client.document("x")
