"""Each row of the seed's webhook table, against a real store on both backends."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

import httpx
import pytest
from sqlmodel import select

from activities.sisbajud.models import SisbajudAlarm, SisbajudNotice
from activities.sisbajud.operator import SisbajudOperations
from services.simulators.hub.notice import build_notice, encode
from services.simulators.hub.sender import prepare_notice
from services.simulators.hub.signing import signature_header
from services.webhook_gateway.app import WEBHOOK_PATH
from services.webhook_gateway.body_limit import MAX_WEBHOOK_BODY
from shared.db.engine import create_engine, session_factory
from shared.db.models import OperationalEvent
from tests.api.sisbajud.conftest import MAX_SKEW_S, OLD_SECRET, SECRET, gateway_client

ORDER = "0190a1b2-c3d4-7e5f-8071-8293a4b5c6d7"
EVENT_AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _order_on_the_mensageria(mensageria):
    """The order the notices name exists: these rows are about the delivery, not the fetch."""
    mensageria.order(ORDER)


async def _post(gateway: httpx.AsyncClient, secret=SECRET, **options) -> httpx.Response:
    order_id, revision = options.pop("order_id", ORDER), options.pop("revision", 1)
    if "body" not in options:  # the Hub resends the same body: the event's time, not the attempt's
        options["body"] = encode(build_notice(order_id, revision, occurred_at=EVENT_AT,
                                              extra=options.pop("extra", None)))
    notice = prepare_notice(secret, order_id, revision, **options)
    return await gateway.post(WEBHOOK_PATH, content=notice.body, headers=notice.headers)


async def _stored(sessions) -> tuple[list[SisbajudNotice], list[SisbajudAlarm]]:
    async with sessions() as session:
        notices = (await session.exec(select(SisbajudNotice))).all()
        alarms = (await session.exec(select(SisbajudAlarm))).all()
    return list(notices), list(alarms)


def _padded(size: int) -> bytes:
    """A usable notice whose encoded body is exactly `size` bytes."""
    bare = encode(build_notice(ORDER, 1, extra={"pad": ""}))
    body = encode(build_notice(ORDER, 1, extra={"pad": "x" * (size - len(bare))}))
    assert len(body) == size
    return body


async def test_accepted_notice_is_recorded_before_the_200(gateway, sessions):
    response = await _post(gateway, msg_id="msg_accept", revision=3)
    assert response.status_code == 200 and response.json()["status"] == "accepted"
    (notice,), alarms = await _stored(sessions)
    assert (notice.webhook_id, notice.order_id, notice.revision) == ("msg_accept", ORDER, 3)
    assert notice.state == "ACCEPTED" and notice.secret_index == 0 and not alarms


async def test_a_redelivery_with_the_same_webhook_id_is_recorded_once(gateway, sessions):
    first = await _post(gateway, msg_id="msg_twice")
    second = await _post(gateway, msg_id="msg_twice")
    assert first.json()["status"] == "accepted"
    assert second.status_code == 200 and second.json()["status"] == "duplicate"
    notices, _ = await _stored(sessions)
    assert len(notices) == 1


async def test_a_body_of_exactly_1_mib_is_accepted(gateway, sessions):
    response = await _post(gateway, body=_padded(MAX_WEBHOOK_BODY), msg_id="msg_1mib")
    assert response.status_code == 200 and response.json()["status"] == "accepted"


async def test_a_body_of_1_mib_plus_one_byte_is_413_and_nothing_is_written(gateway, sessions):
    response = await _post(gateway, body=_padded(MAX_WEBHOOK_BODY + 1))
    assert response.status_code == 413
    assert await _stored(sessions) == ([], [])


async def test_an_oversized_stream_without_length_is_refused_while_streaming(gateway, sessions):
    notice = prepare_notice(SECRET, ORDER, 1, body=_padded(MAX_WEBHOOK_BODY + 1))
    sent = 0

    async def chunks():
        nonlocal sent
        for start in range(0, len(notice.body), 64 * 1024):
            sent += 1
            yield notice.body[start:start + 64 * 1024]

    headers = {k: v for k, v in notice.headers.items() if k != "content-length"}
    response = await gateway.post(WEBHOOK_PATH, content=chunks(), headers=headers)
    assert response.status_code == 413
    assert await _stored(sessions) == ([], [])


async def test_no_valid_signature_is_401_and_nothing_is_written(gateway, sessions):
    for tamper in ("missing", "wrong-secret", "body", "timestamp", "malformed"):
        notice = prepare_notice("whsec_" + "QUJD" * 8 if tamper == "wrong-secret" else SECRET,
                                ORDER, 1)
        headers, body = dict(notice.headers), notice.body
        if tamper == "missing":
            del headers["webhook-signature"]
        elif tamper == "body":
            body = body.replace(b'"revision":1', b'"revision":2')
        elif tamper == "timestamp":
            headers["webhook-timestamp"] = str(int(headers["webhook-timestamp"]) + 1)
        elif tamper == "malformed":
            headers["webhook-signature"] = "v1," + "!" * 10
        response = await gateway.post(WEBHOOK_PATH, content=body, headers=headers)
        assert response.status_code == 401, tamper
    assert await _stored(sessions) == ([], [])


async def test_rotation_accepts_the_previous_secret_and_any_matching_entry(gateway, sessions):
    old_only = await _post(gateway, secret=OLD_SECRET, msg_id="msg_old")
    stale_then_new = await _post(gateway, secret=["whsec_" + "QUJD" * 8, SECRET],
                                 msg_id="msg_two")
    assert old_only.status_code == stale_then_new.status_code == 200
    notices, _ = await _stored(sessions)
    assert sorted(n.secret_index for n in notices) == [0, 1]


async def test_a_retired_secret_is_refused(face):
    async with gateway_client(face, secrets=[SECRET]) as gateway:
        response = await _post(gateway, secret=OLD_SECRET)
    assert response.status_code == 401


async def test_out_of_skew_timestamp_is_accepted_with_a_warning(gateway, sessions, caplog):
    with caplog.at_level(logging.WARNING, logger="esteira.webhook"):
        response = await _post(gateway, skew_s=-(MAX_SKEW_S + 60), msg_id="msg_skew")
    assert response.status_code == 200 and response.json()["status"] == "accepted"
    (notice,), _ = await _stored(sessions)
    assert notice.skewed and notice.skew_s > MAX_SKEW_S
    assert any("EXECUTOR_HUB_WEBHOOK_MAX_SKEW_SEC" in r.getMessage() for r in caplog.records)


UNUSABLE = [
    b"not json at all",
    b'{"type":"sisbajud.execution.notice","data":{"revision":1}}',
    b'{"type":"sisbajud.execution.notice","data":{"orderId":"x","revision":"1"}}',
    b'{"type":"something.else","data":{"orderId":"x","revision":1}}',
]


async def test_signed_but_unusable_body_is_200_parked_with_an_alarm(gateway, sessions):
    for index, body in enumerate(UNUSABLE):
        response = await _post(gateway, body=body, msg_id=f"msg_parked_{index}")
        assert response.status_code == 200 and response.json()["status"] == "parked", body
    notices, alarms = await _stored(sessions)
    assert {n.state for n in notices} == {"PARKED"} and len(notices) == len(UNUSABLE)
    assert all(n.order_id is None and n.reason for n in notices)
    assert sorted(a.webhook_id for a in alarms) == sorted(n.webhook_id for n in notices)
    assert {a.code for a in alarms} == {"notice.unusable"}
    async with sessions() as session:
        events = (await session.exec(select(OperationalEvent))).all()
    assert [e.type for e in events] == ["notice.unusable"] * len(UNUSABLE)
    again = await _post(gateway, body=UNUSABLE[0], msg_id="msg_parked_0")
    assert again.status_code == 200
    assert len((await _stored(sessions))[1]) == len(UNUSABLE)


async def test_store_down_is_503_with_retry_after(settings, tmp_path, backend, face):
    if backend == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path}"  # a directory: the file can't be opened
    else:
        url = settings.sqlalchemy_url.rsplit("/", 1)[0].replace(
            settings.sqlalchemy_url.split("@")[1].split("/")[0], "127.0.0.1:1") + "/nowhere"
    engine = create_engine(url)
    try:
        down = SisbajudOperations(face.settings, session_factory(engine), face.temporal)
        async with gateway_client(down) as gateway:
            response = await _post(gateway)
    finally:
        await engine.dispose()
    assert response.status_code == 503 and response.headers["Retry-After"]
    assert json.loads(response.content)["code"] == "store.unavailable"


async def test_an_overlong_webhook_id_is_still_recorded_once(gateway, sessions):
    msg_id = "msg_" + "x" * 400
    assert (await _post(gateway, msg_id=msg_id)).json()["status"] == "accepted"
    assert (await _post(gateway, msg_id=msg_id)).json()["status"] == "duplicate"
    (notice,), _ = await _stored(sessions)
    assert notice.webhook_id.startswith("sha256:")


async def test_a_signed_timestamp_that_is_no_unix_time_is_accepted_out_of_skew_with_a_warning(
        gateway, sessions, caplog):
    # The seed accepts a delivery off EXECUTOR_HUB_WEBHOOK_MAX_SKEW_SEC and logs a warning; a
    # 401 (or a 500) would make the Hub redeliver it for its whole schedule.
    body = encode(build_notice(ORDER, 1, occurred_at=EVENT_AT))
    odd = {"msg_far_0": str(10**39), "msg_far_1": "253402300800", "msg_far_2": "yesterday"}
    with caplog.at_level(logging.WARNING, logger="esteira.webhook"):
        for msg_id, timestamp in odd.items():
            response = await gateway.post(WEBHOOK_PATH, content=body, headers={
                "content-type": "application/json", "webhook-id": msg_id,
                "webhook-timestamp": timestamp,
                "webhook-signature": signature_header([SECRET], msg_id, timestamp, body)})
            assert response.status_code == 200, (timestamp, response.text)
            assert response.json() == {"status": "accepted", "webhookId": msg_id}
    notices, alarms = await _stored(sessions)
    assert sorted((n.webhook_id, n.state, n.skewed, n.skew_s) for n in notices) == [
        (msg_id, "ACCEPTED", True, None) for msg_id in odd]
    assert alarms == []
    warned = [r.getMessage() for r in caplog.records if "no Unix time" in r.getMessage()]
    assert len(warned) == 3 and "EXECUTOR_HUB_WEBHOOK_MAX_SKEW_SEC" in warned[0]


async def test_an_odd_timestamp_without_a_valid_signature_is_401_and_nothing_is_written(
        gateway, sessions):
    body = encode(build_notice(ORDER, 1, occurred_at=EVENT_AT))
    timestamp = str(10**39)
    response = await gateway.post(WEBHOOK_PATH, content=body, headers={
        "webhook-id": "msg_forged", "webhook-timestamp": timestamp,
        "webhook-signature": signature_header([SECRET], "msg_forged", "1", body)})
    assert response.status_code == 401 and response.json()["code"] == "signature.no-match"
    assert await _stored(sessions) == ([], [])


async def test_the_last_unix_second_a_date_holds_is_accepted_as_skewed(gateway, sessions):
    response = await _post(gateway, timestamp=253_402_300_799, msg_id="msg_9999")
    assert response.status_code == 200 and response.json()["status"] == "accepted"
    (notice,), _ = await _stored(sessions)
    assert notice.skewed and notice.skew_s == -(2**31 - 1)  # kept at the column's bound


def _nested(depth: int) -> bytes:
    return (b'{"type":"sisbajud.execution.notice","data":{"orderId":"' + ORDER.encode()
            + b'","revision":1},"x":' + b"[" * depth + b"]" * depth + b"}")


@pytest.mark.parametrize(("body", "reason"), [
    (b'{"type":"sisbajud.execution.notice","data":{"orderId":"' + ORDER.encode()
     + b'","revision":' + str(10**30).encode() + b"}}", "not an execution notice (data.revision)"),
    (b'{"type":"sisbajud.execution.notice","data":{"orderId":"' + ORDER.encode()
     + b'","revision":' + str(2**31).encode() + b"}}", "not an execution notice (data.revision)"),
    (_nested(100_000), "body is not JSON this executor reads: nested too deep"),
    (b'{"type":"sisbajud.execution.notice","data":{"orderId":"' + ORDER.encode()
     + b'","revision":' + b"9" * 5000 + b"}}",
     "body is not JSON this executor reads: Exceeds the limit (4300 digits) for integer "
     "string conversion: value has 5000 digits; use sys.set_int_max_str_digits() to increase "
     "the limit"),
], ids=["revision-1e30", "revision-2^31", "nested-100000", "revision-5000-digits"])
async def test_a_signed_body_the_store_cannot_hold_is_200_parked_with_an_alarm(
        gateway, sessions, body, reason):
    response = await _post(gateway, body=body, msg_id="msg_odd")
    assert response.status_code == 200 and response.json() == {"status": "parked",
                                                                "webhookId": "msg_odd"}
    (notice,), (alarm,) = await _stored(sessions)
    assert (notice.state, notice.reason, notice.order_id, notice.revision) == (
        "PARKED", reason, None, None)
    assert (alarm.code, alarm.webhook_id, alarm.details["reason"]) == (
        "notice.unusable", "msg_odd", reason)


async def test_a_reused_webhook_id_with_another_signed_body_raises_an_alarm(gateway, sessions):
    body = encode(build_notice(ORDER, 1))
    first = await _post(gateway, msg_id="msg_reused", body=body)
    again = await _post(gateway, msg_id="msg_reused", body=body)  # the Hub's retry: same bytes
    other = await _post(gateway, msg_id="msg_reused", revision=2)
    assert first.json()["status"] == "accepted" and again.json()["status"] == "duplicate"
    assert other.status_code == 200 and other.json()["status"] == "duplicate"
    (notice,), (alarm,) = await _stored(sessions)
    assert (notice.revision, notice.state) == (1, "ACCEPTED")  # the first body stands
    assert (alarm.code, alarm.webhook_id, alarm.order_id) == ("notice.id-reused",
                                                              "msg_reused", ORDER)
    assert alarm.details["revision"] == 2
    assert alarm.details["recorded_sha256"] == notice.body_sha256 != alarm.details[
        "received_sha256"]



async def test_a_signed_body_with_nul_bytes_is_parked_on_either_store(gateway, sessions):
    response = await _post(gateway, body=b"\x00\xff not a notice \x00", msg_id="msg_nul")
    assert response.status_code == 200 and response.json()["status"] == "parked"
    (notice,), (alarm,) = await _stored(sessions)
    assert notice.state == "PARKED" and "\x00" not in (notice.body or "")
    assert alarm.code == "notice.unusable"
