"""Standard Webhooks v1 verification: secrets, rotation, tampering, missing headers, skew."""

from __future__ import annotations

import base64
import hmac

import pytest

from services.simulators.hub.signing import sign
from services.webhook_gateway import signature
from services.webhook_gateway.signature import (
    SignatureScheme,
    StandardWebhooksV1,
    VerdictCode,
)

# Known-answer vector from standard-webhooks/libraries/python/tests/test_webhooks.py.
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
MSG_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
TS = 1614265330
BODY = b'{"test": 2432232314}'
SIG = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
OTHER = "whsec_" + base64.b64encode(b"another secret of 24 bytes").decode()


def _headers(sig: str = SIG, ts: int | str = TS, msg_id: str = MSG_ID) -> dict[str, str]:
    return {"webhook-id": msg_id, "webhook-timestamp": str(ts), "webhook-signature": sig}


def _scheme(*secrets: str, now: float = TS, max_skew_s: int = 300) -> StandardWebhooksV1:
    return StandardWebhooksV1(list(secrets), max_skew_s=max_skew_s, clock=lambda: now)


def test_known_answer_vector_is_valid():
    verdict = _scheme(SECRET).verify(_headers(), BODY)
    assert verdict.valid and verdict.code is VerdictCode.OK
    assert verdict.message_id == MSG_ID and verdict.timestamp == TS
    assert not verdict.skewed


def test_scheme_satisfies_the_protocol():
    scheme: SignatureScheme = _scheme(SECRET)
    assert scheme.verify(_headers(), BODY).valid


def test_secret_without_prefix_is_accepted():
    assert _scheme(SECRET.removeprefix("whsec_")).verify(_headers(), BODY).valid


def test_rotated_secret_matches_when_it_is_any_of_the_configured_ones():
    verdict = _scheme(OTHER, SECRET).verify(_headers(), BODY)
    assert verdict.valid and verdict.secret_index == 1


def test_wrong_secret_is_refused():
    verdict = _scheme(OTHER).verify(_headers(), BODY)
    assert not verdict.valid and verdict.code is VerdictCode.NO_MATCH


@pytest.mark.parametrize("missing", ["webhook-id", "webhook-timestamp", "webhook-signature"])
def test_missing_header_is_refused(missing):
    headers = _headers()
    del headers[missing]
    verdict = _scheme(SECRET).verify(headers, BODY)
    assert not verdict.valid and verdict.code is VerdictCode.MISSING_HEADER
    assert missing in verdict.detail


def test_header_names_are_case_insensitive():
    headers = {k.title(): v for k, v in _headers().items()}
    assert _scheme(SECRET).verify(headers, BODY).valid


def test_one_valid_signature_among_several_is_enough():
    junk = "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= v2,whatever v1a,ed25519junk"
    assert _scheme(SECRET).verify(_headers(f"{junk} {SIG}"), BODY).valid


def test_only_v1_entries_are_considered():
    unversioned = SIG.removeprefix("v1,")
    verdict = _scheme(SECRET).verify(_headers(f"v2,{unversioned} {unversioned}"), BODY)
    assert not verdict.valid


def test_tampered_body_is_refused():
    assert not _scheme(SECRET).verify(_headers(), BODY.replace(b"2432", b"2433")).valid


def test_signature_for_another_id_or_timestamp_is_refused():
    assert not _scheme(SECRET).verify(_headers(msg_id="msg_other"), BODY).valid
    assert not _scheme(SECRET).verify(_headers(ts=TS + 1), BODY).valid


def _signed(raw_ts: str, secret: str = SECRET) -> dict[str, str]:
    """Headers signed over `raw_ts` exactly as written (Standard Webhooks signs the header)."""
    return _headers(sign(secret, MSG_ID, raw_ts, BODY), ts=raw_ts)


@pytest.mark.parametrize("raw", ["1" + "0" * 39, "253402300800", "+1674087231", "1_674_087_231",
                                 " 1674087231", "-5", "yesterday"])
def test_a_signed_timestamp_that_is_no_unix_time_is_valid_and_out_of_skew(raw):
    verdict = _scheme(SECRET).verify(_signed(raw), BODY)
    assert verdict.valid and verdict.code is VerdictCode.OK and verdict.skewed
    assert (verdict.timestamp, verdict.skew_s, verdict.raw_timestamp) == (None, None, raw)


def test_the_signature_covers_the_timestamp_as_sent_not_as_a_number():
    # `0…` + TS parses to TS, but its signature is over the header's own characters.
    padded = "0" + str(TS)
    assert not _scheme(SECRET).verify(_headers(ts=padded), BODY).valid
    assert _scheme(SECRET).verify(_signed(padded), BODY).valid


@pytest.mark.parametrize("raw", ["1" + "0" * 39, "yesterday"])
def test_an_odd_timestamp_with_a_wrong_signature_is_still_refused(raw):
    verdict = _scheme(OTHER).verify(_signed(raw), BODY)
    assert not verdict.valid and verdict.code is VerdictCode.NO_MATCH


def test_skew_beyond_the_maximum_is_flagged_but_still_valid():
    late = _scheme(SECRET, now=TS + 301).verify(_headers(), BODY)
    early = _scheme(SECRET, now=TS - 301).verify(_headers(), BODY)
    assert late.valid and late.skewed and late.skew_s == 301
    assert early.valid and early.skewed and early.skew_s == -301


def test_skew_within_the_maximum_is_not_flagged():
    verdict = _scheme(SECRET, now=TS + 300).verify(_headers(), BODY)
    assert verdict.valid and not verdict.skewed and verdict.skew_s == 300


def test_comparison_uses_compare_digest(monkeypatch):
    calls = []
    real = hmac.compare_digest

    def spy(a, b):
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(signature.hmac, "compare_digest", spy)
    assert _scheme(SECRET).verify(_headers(), BODY).valid
    assert calls


@pytest.mark.parametrize("secrets", [[], ["whsec_not*base64"], ["whsec_"]])
def test_bad_secret_configuration_fails_fast(secrets):
    with pytest.raises(ValueError):
        StandardWebhooksV1(secrets)
