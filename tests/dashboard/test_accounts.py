"""Operator accounts, password hashes and the signed session, without a server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from services.dashboard.accounts import OperatorDirectory, banner_note
from services.dashboard.passwords import hash_password, verify_password
from services.dashboard.session import SessionCodec, tokens_match
from shared.settings import Settings

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def test_a_password_hash_matches_only_its_password_and_is_salted():
    encoded = hash_password("correct horse")
    assert encoded.startswith("scrypt$") and "correct horse" not in encoded
    assert verify_password("correct horse", encoded)
    assert not verify_password("correct hors", encoded)
    assert hash_password("correct horse") != encoded, "a fresh salt each time"
    for broken in ("", "scrypt$x", "pbkdf2$1$1$1$AA==$AA==", encoded[:-4] + "!!!!"):
        assert not verify_password("correct horse", broken)


def test_configured_operators_replace_the_development_default():
    configured = Settings(environment="Production", dashboard={"operators": [
        {"name": "ana", "password_hash": hash_password("s3cret")}]})
    directory = OperatorDirectory.from_settings(configured, "the-api-key")
    assert directory.authenticate("ana", "s3cret") == "ana"
    assert directory.authenticate("ana", "wrong") is None
    assert directory.authenticate("operator", "the-api-key") is None
    assert directory.authenticate("nobody", "s3cret") is None
    assert "1 operator account(s)" in banner_note(configured)


def test_development_signs_in_with_the_api_key_and_production_without_accounts_cannot():
    dev = OperatorDirectory.from_settings(Settings(), "the-api-key")
    assert dev.login_enabled and dev.authenticate("operator", "the-api-key") == "operator"
    assert dev.authenticate("operator", "the-api-keY") is None
    assert "password: the API key" in banner_note(Settings())
    production = Settings(environment="Production")
    closed = OperatorDirectory.from_settings(production, "the-api-key")
    assert not closed.login_enabled
    assert closed.authenticate("operator", "the-api-key") is None
    assert "sign-in disabled" in banner_note(production)


def test_a_session_is_readable_until_it_expires_and_only_with_its_secret():
    codec = SessionCodec.from_settings(Settings(), "key-one")
    value, session = codec.issue("ana", NOW)
    assert codec.read(value, NOW + timedelta(minutes=479)) == session
    assert codec.read(value, NOW + timedelta(minutes=480)) is None, "expired"
    other = SessionCodec.from_settings(Settings(), "key-two")
    assert other.read(value, NOW) is None, "a rotated API key ends every session"
    pinned = Settings(dashboard={"session_secret": "fixed"})
    assert SessionCodec.from_settings(pinned, "key-one").read(value, NOW) is None
    for junk in (None, "", "no-dot", value + "x", "e30." + value.rsplit(".", 1)[1]):
        assert codec.read(junk, NOW) is None


def test_csrf_tokens_compare_only_when_both_sides_exist():
    assert tokens_match("abc", "abc")
    assert not tokens_match("abc", "abd")
    assert not tokens_match(None, "abc")
    assert not tokens_match("", "")
    assert not tokens_match("a", None)
