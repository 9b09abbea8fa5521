"""A process told its key directories never opens a key file outside them, and its refusal
reads the same whatever the filesystem holds at that path."""

from __future__ import annotations

import pytest

from activities.signer import engine
from activities.signer.crypto.errors import SignerCryptoError
from activities.signer.engine import CertificateSpec, open_certificate
from activities.signer.models.jobs import SigningProfile
from activities.signer.profiles import profile_secret

from .support import PFX_PASSWORD


def _spec(path: str, directories: tuple[str, ...] | None) -> CertificateSpec:
    return CertificateSpec(cache_key="k", source="pfx", secret=PFX_PASSWORD, pfx_path=path,
                           key_directories=directories)


def _failure(spec: CertificateSpec) -> str:
    with pytest.raises(SignerCryptoError) as err:
        open_certificate(spec)
    return str(err.value)


def test_a_pfx_outside_the_key_directories_fails_alike_whatever_is_there(tmp_path, dev_bundle):
    allowed = (str(tmp_path / "keys"),)
    (tmp_path / "a-directory").mkdir()
    messages = {_failure(_spec(str(path), allowed)) for path in (
        dev_bundle.pfx, tmp_path / "a-directory", tmp_path / "missing.pfx",
        tmp_path / "keys" / ".." / "missing.pfx")}
    assert len(messages) == 1, messages
    [message] = messages
    assert "outside Signing:KeyDirectories" in message
    assert "No such file" not in message and "directory" not in message


def test_a_pfx_inside_the_key_directories_opens(dev_bundle):
    signer = open_certificate(_spec(str(dev_bundle.pfx), (str(dev_bundle.pfx.parent),)))
    assert signer.certificate is not None


def test_a_process_never_told_its_directories_opens_any_path(dev_bundle):
    assert open_certificate(_spec(str(dev_bundle.pfx), None)).certificate is not None


def test_a_password_file_outside_the_key_directories_is_never_read(tmp_path, monkeypatch):
    secret = tmp_path / "outside.password"
    secret.write_text("s3cret")
    profile = SigningProfile(name="p", pfx_path=str(tmp_path / "keys" / "p.pfx"),
                             pfx_password_file=str(secret))
    monkeypatch.setattr(engine, "_KEY_DIRECTORIES", (str(tmp_path / "keys"),))
    assert profile_secret(profile) is None
    monkeypatch.setattr(engine, "_KEY_DIRECTORIES", (str(tmp_path),))
    assert profile_secret(profile) == "s3cret"
