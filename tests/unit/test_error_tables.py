"""The error tables: one per contract, every code once, each raised code in its table, and the
REST and gRPC refusal helpers reading the same row."""

from __future__ import annotations

import ast
import json
from http import HTTPStatus
from pathlib import Path

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2

from activities.pickup.contracts.board import PickupErrorCode
from activities.pickup.contracts.errors import PICKUP_ERRORS
from activities.signer.contracts.approvals import ApprovalErrorCode
from activities.signer.contracts.errors import SIGNER_ERRORS
from activities.signer.contracts.jobs import SignerErrorCode
from activities.sisbajud.contracts.errors import (
    SISBAJUD_ERRORS,
    SisbajudApiErrorCode,
    WebhookErrorCode,
)
from services.grpc_server.refusal import error_status
from services.webhook_gateway.signature import VerdictCode
from shared.errors import COMMON_ERRORS, ErrorCode, ErrorTable, EsteiraError, Refusal
from shared.problem import refusal

ROOT = Path(__file__).resolve().parents[2]
# The helpers that build a refusal from a domain code, and the table each one reads.
HELPERS = {"refuse": SIGNER_ERRORS, "signer_error": SIGNER_ERRORS,
           "pickup_error": PICKUP_ERRORS, "sisbajud_error": SISBAJUD_ERRORS}
ENUMS = {"SignerErrorCode": SignerErrorCode, "ApprovalErrorCode": ApprovalErrorCode,
         "PickupErrorCode": PickupErrorCode, "SisbajudApiErrorCode": SisbajudApiErrorCode,
         "WebhookErrorCode": WebhookErrorCode}


def test_the_tables_merge_with_no_code_in_two_domains():
    merged = COMMON_ERRORS | SIGNER_ERRORS | PICKUP_ERRORS | SISBAJUD_ERRORS
    assert len(merged) == (len(COMMON_ERRORS) + len(SIGNER_ERRORS) + len(PICKUP_ERRORS)
                           + len(SISBAJUD_ERRORS))
    with pytest.raises(ValueError, match=r"job\.not-found"):
        SIGNER_ERRORS | ErrorTable({SignerErrorCode.JOB_NOT_FOUND: Refusal.CONFLICT})


@pytest.mark.parametrize("row", list(Refusal), ids=lambda r: r.name)
def test_every_refusal_names_a_grpc_status_and_an_error_http_status(row):
    assert grpc.StatusCode[row.grpc] is not grpc.StatusCode.OK
    assert 400 <= row.http < 600


def test_a_stale_version_is_aborted_in_every_domain():
    """A lost compare-and-set means "read again, then retry": gRPC's ABORTED, REST's 409."""
    stale = {PickupErrorCode.VERSION_CONFLICT: PICKUP_ERRORS,
             SignerErrorCode.PIPELINE_RACE_LOST: SIGNER_ERRORS}
    assert {code: table[code] for code, table in stale.items()} == dict.fromkeys(
        stale, Refusal.STALE)
    assert (Refusal.STALE.http, Refusal.STALE.grpc) == (409, "ABORTED")


@pytest.mark.parametrize("enum, table", [(PickupErrorCode, PICKUP_ERRORS),
                                         (SisbajudApiErrorCode, SISBAJUD_ERRORS),
                                         (WebhookErrorCode, SISBAJUD_ERRORS),
                                         (ErrorCode, COMMON_ERRORS)])
def test_every_refusal_code_of_a_contract_is_in_its_table(enum, table):
    assert [code for code in enum if code not in table] == []


def test_every_refused_signature_verdict_is_a_webhook_code():
    assert {WebhookErrorCode(code) for code in VerdictCode if code is not VerdictCode.OK} \
        == {code for code in WebhookErrorCode if code.startswith("signature.")}


def _raised_codes() -> list[tuple[str, str, str]]:
    """(file:line, helper, code) of every `helper(Enum.MEMBER, …)` in services/ and activities/."""
    found: list[tuple[str, str, str]] = []
    for folder in ("services", "activities"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                name = getattr(node, "func", None)
                name = getattr(name, "id", None) or getattr(name, "attr", None)
                if name not in HELPERS or not node.args:
                    continue
                first = node.args[0]
                if isinstance(first, ast.Attribute) and isinstance(first.value, ast.Name) \
                        and first.value.id in ENUMS:
                    code = ENUMS[first.value.id][first.attr]
                    found.append((f"{path.relative_to(ROOT)}:{node.lineno}", name, code))
    return found


def test_every_code_a_door_refuses_with_is_in_the_table_its_helper_reads():
    raised = _raised_codes()
    assert len(raised) > 40, "the scan found the refusals"
    assert [(where, code) for where, helper, code in raised if code not in HELPERS[helper]] == []


def test_a_domain_code_needs_its_table_and_a_common_code_does_not():
    assert EsteiraError(ErrorCode.NOT_FOUND, "gone").status == 404
    with pytest.raises(KeyError):
        EsteiraError(PickupErrorCode.VERSION_CONFLICT, "stale")
    error = PICKUP_ERRORS.error(PickupErrorCode.VERSION_CONFLICT, "stale")
    assert (error.status, error.grpc_status) == (409, "ABORTED")


def test_rest_and_grpc_refusals_read_the_same_row():
    error = SIGNER_ERRORS.error(SignerErrorCode.UPLOAD_TOO_LARGE, "too big")
    response = refusal(error, headers={"Retry-After": "5"}, errors=[])
    assert response.status_code == 413 and response.headers["retry-after"] == "5"
    assert response.media_type == "application/problem+json"
    assert json.loads(response.body) == {"type": "about:blank",
                                         "title": HTTPStatus(413).phrase, "status": 413,
                                         "detail": "too big", "code": "upload.too-large",
                                         "message": "too big", "errors": []}
    status = error_status(error)
    assert status.code is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert status.details == "upload.too-large: too big"
    trailers = dict(status.trailing_metadata)
    details = status_pb2.Status.FromString(trailers["grpc-status-details-bin"])
    info = error_details_pb2.ErrorInfo()
    assert details.details[0].Unpack(info)
    assert (info.reason, info.domain, info.metadata["httpStatus"]) == (
        "upload.too-large", "esteira", "413")
