"""Names the pipeline can't carry are refused at upload, on both doors, storing nothing."""

from __future__ import annotations

import uuid

import grpc
import pytest

from activities.signer.crypto.samples import make_pdf
from tests.api.conftest import API_KEY
from tests.api.signer.test_grpc_signer import (  # noqa: F401 (the gRPC fixture)
    KEY,
    refused,
    signer,
    stored_uploads,
    upload,
)

AUTH = {"X-API-Key": API_KEY}
# 240 bytes is the longest name whose longest output (`<stem>.signed.pdf.enc.tmp`) fits 255.
LONGEST_OK = "a" * 236 + ".pdf"
TOO_LONG = [
    "a" * 237 + ".pdf",  # 241 bytes: `.signed.pdf.tmp` alone already passes 255
    "a" * 251 + ".pdf",  # 255 bytes: the filesystem takes it, its output can't exist
    "é" * 119 + ".pdf",  # 242 bytes in UTF-8, 123 characters
]
BIDI = ["fatura\u202efdp.exe.pdf", "a\u2066b.pdf", "a\u200fb.pdf", "a\u061cb.pdf",
        "a\u202ab.pdf", "a\u2069b.pdf", "a\u200eb.pdf"]


@pytest.fixture(autouse=True)
def _own_task_queues(settings):
    settings.pipeline.task_queue_suffix = f"-names-{uuid.uuid4().hex[:8]}"


async def test_rest_upload_refuses_a_name_the_pipeline_cannot_carry(api):
    for name in TOO_LONG + BIDI:
        answer = await api.post("/api/files", headers=AUTH, files={"file": (name, make_pdf())})
        assert (answer.status_code, answer.json()["code"]) == (422, "input.invalid-name"), name
    assert stored_uploads(api.context.settings) == []


async def test_rest_upload_takes_the_longest_name_that_fits(api):
    answer = await api.post("/api/files", headers=AUTH,
                            files={"file": (LONGEST_OK, make_pdf())})
    assert answer.status_code == 201, answer.text
    assert answer.json()["fileName"] == LONGEST_OK


async def test_grpc_submit_refuses_the_same_names(signer):  # noqa: F811
    for name in TOO_LONG + BIDI:
        assert await refused(signer.stub.SubmitFile(upload(name, make_pdf()), metadata=KEY)) \
            == (grpc.StatusCode.INVALID_ARGUMENT, "input.invalid-name"), name
    assert stored_uploads(signer.settings) == []


async def test_grpc_refusal_reaches_a_client_still_streaming(signer):  # noqa: F811
    # The name is refused on the first message while the client has megabytes left to send:
    # the client must read our status, not a broken send (INTERNAL from grpc's core).
    data = make_pdf() + b"\0" * 2_000_000
    assert await refused(signer.stub.SubmitFile(upload(TOO_LONG[0], data), metadata=KEY)) \
        == (grpc.StatusCode.INVALID_ARGUMENT, "input.invalid-name")
    assert stored_uploads(signer.settings) == []
