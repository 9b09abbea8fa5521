"""Log lines in the seed's shape, daily files rolled by size, secrets never written."""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime

import pytest

from shared.logs import configure_logging, props
from shared.logs.files import DailySizeRotatingFile
from shared.logs.format import format_timestamp
from shared.logs.masking import SecretMasker, secret_values
from shared.settings import Settings

LINE = re.compile(
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}\+00:00 \[INF\] Worker started job 9b62  "
    r'\{Process: "test", SourceContext: "esteira.test", JobId: "9b62", Format: "Pades"\}$'
)


@pytest.fixture
def restore_logging():
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


def test_timestamp_has_seven_fractional_digits_and_utc_offset():
    moment = datetime(2026, 5, 26, 15, 42, 11, 123456, tzinfo=UTC).timestamp()
    assert format_timestamp(moment) == "2026-05-26T15:42:11.1234560+00:00"


def test_line_shape_and_daily_file_name(tmp_path, restore_logging):
    settings = Settings(data_dir=tmp_path)
    configure_logging(settings, process="test")
    logging.getLogger("esteira.test").info("Worker started job %s", "9b62",
                                           extra=props(JobId="9b62", Format="Pades"))
    today = datetime.now(UTC).strftime("%Y%m%d")
    written = (tmp_path / "logs" / f"esteira-{today}.log").read_text().splitlines()
    assert LINE.match(written[-1]), written[-1]


def test_secrets_from_settings_never_reach_console_or_file(tmp_path, capfd, restore_logging):
    settings = Settings(
        data_dir=tmp_path, api_key="k3y-AbCdEfGh-123",
        database_url="postgresql://esteira:db-Pa55word@db/esteira",
        signing={"profiles": [{"name": "folha", "pfx_password": "pfx-Secret-99",
                               "pkcs11": {"pin": "4321-9876"}}]},
    )
    configure_logging(settings, process="test")
    log = logging.getLogger("esteira.test")
    log.warning("key %s pfx %s pin %s", "k3y-AbCdEfGh-123", "pfx-Secret-99", "4321-9876")
    log.info("connecting to %s", "postgresql://esteira:db-Pa55word@db/esteira",
             extra=props(ApiKey="k3y-AbCdEfGh-123"))
    try:
        raise RuntimeError("failed with pfx-Secret-99")
    except RuntimeError:
        log.exception("boom")
    console = capfd.readouterr().err
    file_text = "".join(p.read_text() for p in (tmp_path / "logs").iterdir())
    for secret in ("k3y-AbCdEfGh-123", "pfx-Secret-99", "4321-9876", "db-Pa55word"):
        assert secret not in console
        assert secret not in file_text
    assert "***" in file_text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("login password=hunter22 ok", "hunter22"),
        ('{"pin": "9911", "x": 1}', "9911"),
        ("X-API-Key: abcdef123456", "abcdef123456"),
        ("Authorization: Bearer eyJhbGciOi.payload.sig", "eyJhbGciOi.payload.sig"),
        ("secret is whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2La", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2La"),
        ("token=tok_live_998877", "tok_live_998877"),
        ("password: hunter2", "hunter2"),
        ("db password: s3cret at login", "s3cret"),
        ("PIN: 1234", "1234"),
        ("client_secret: Zq9-x", "Zq9-x"),
    ],
)
def test_secret_looking_pairs_are_masked_even_when_not_configured(text, secret):
    masked = SecretMasker().mask(text)
    assert secret not in masked
    assert "***" in masked


def test_ordinary_words_survive_masking():
    assert SecretMasker(["abc"]).mask("the abc of signing") == "the abc of signing"


def test_prose_after_a_secret_word_is_not_a_secret(tmp_path):
    # The pair rule once read "secret: set" as a key and its value and logged "secret: ***".
    from services.webhook_gateway.secrets import MissingWebhookSecretError, resolve_secrets

    settings = Settings(environment="Production", data_dir=tmp_path)
    with pytest.raises(MissingWebhookSecretError) as refused:
        resolve_secrets(settings)
    message = str(refused.value)
    masker = SecretMasker(secret_values(settings))
    assert masker.mask(message) == message
    assert "secret: set ESTEIRA_SISBAJUD__HUB_WEBHOOK_SECRETS" in masker.mask(message)
    assert masker.mask("the token: expired; mapping=folha ping=3") == \
        "the token: expired; mapping=folha ping=3"


def test_size_limit_rolls_to_a_numbered_file_and_retention_prunes(tmp_path):
    files = DailySizeRotatingFile(tmp_path, size_limit_bytes=200, retained=3)
    for n in range(40):
        files.write_line(f"line {n:03d} " + "x" * 40)
    files.close()
    today = datetime.now(UTC).strftime("%Y%m%d")
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 3
    assert all(re.fullmatch(rf"esteira-{today}(_\d{{3}})?\.log", n) for n in names)
    assert all(p.stat().st_size <= 200 for p in tmp_path.iterdir())
    newest = max(tmp_path.iterdir(), key=lambda p: p.name)
    assert "line 039" in newest.read_text()


def test_a_restart_appends_to_the_days_latest_file(tmp_path):
    first = DailySizeRotatingFile(tmp_path, size_limit_bytes=100, retained=14)
    for n in range(6):
        first.write_line(f"first {n} " + "y" * 30)
    first.close()
    before = {p.name: p.read_text() for p in tmp_path.iterdir()}
    last = max(before)
    second = DailySizeRotatingFile(tmp_path, size_limit_bytes=100, retained=14)
    second.write_line("second")
    second.close()
    after = {p.name: p.read_text() for p in tmp_path.iterdir()}
    assert set(after) == set(before), "the day's latest file had room: no new file"
    assert after[last] == before[last] + "second\n", "appended, nothing truncated"


def test_only_secret_keys_in_settings_count_as_secrets():
    from shared.logs.masking import secret_values

    settings = Settings(signing={"profiles": [{"name": "inbox", "mapping": "folha",
                                               "pin": "5566", "hsm_pin": "7788"}]})
    values = secret_values(settings)
    assert {"5566", "7788"} <= set(values)
    assert "inbox" not in values and "folha" not in values


def test_json_format_writes_one_object_per_line_with_bound_keys_and_secrets_masked(
        tmp_path, capfd, restore_logging):
    settings = Settings(data_dir=tmp_path, api_key='k3y-"AbCd\\Efgh-123',
                        logging={"format": "json"})
    configure_logging(settings, process="test")
    log = logging.getLogger("esteira.test")
    log.info("Worker started job %s", "9b62",
             extra=props(JobId="9b62", Format="Pades", Attempt=2, message="not the message"))
    log.warning("login password=hunter22 with key %s", 'k3y-"AbCd\\Efgh-123',
                extra=props(ApiKey="plain-value-1", Nested={"token": "t0ken-value", "n": 1}))
    try:
        raise RuntimeError('failed\nwith k3y-"AbCd\\Efgh-123')
    except RuntimeError:
        log.exception("boom")
    today = datetime.now(UTC).strftime("%Y%m%d")
    for text in (capfd.readouterr().err, (tmp_path / "logs" / f"esteira-{today}.log").read_text()):
        started, warned, failed = [json.loads(line) for line in text.splitlines()]
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}\+00:00", started["time"])
        assert {k: started[k] for k in ("level", "logger", "message", "Process", "JobId",
                                        "Format", "Attempt", "props.message")} == {
            "level": "INFO", "logger": "esteira.test", "message": "Worker started job 9b62",
            "Process": "test", "JobId": "9b62", "Format": "Pades", "Attempt": 2,
            "props.message": "not the message"}
        assert warned["level"] == "WARNING"
        assert warned["message"] == "login password=*** with key ***"
        assert warned["ApiKey"] == "***" and warned["Nested"] == {"token": "***", "n": 1}
        assert failed["level"] == "ERROR" and "RuntimeError" in failed["exception"]
        assert 'k3y-"AbCd' not in text and "hunter22" not in text and "t0ken" not in text


def test_text_format_is_the_default():
    assert Settings().logging.format == "text"
