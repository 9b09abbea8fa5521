"""Key material is written private (0600) from its creation, not chmod-ed afterwards."""

from __future__ import annotations

import os
import stat

import pytest

from activities.signer.crypto.certs import write_dev_bundle
from shared.private_files import write_private


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def no_chmod(monkeypatch):
    """No later chmod can rescue a file created readable; umask 0 hides nothing either."""

    def refuse(*_args, **_kwargs):
        raise AssertionError("a private file must not rely on a chmod after its creation")

    monkeypatch.setattr(os, "chmod", refuse)
    previous = os.umask(0)
    yield
    os.umask(previous)


def test_the_dev_signer_key_and_pfx_are_created_0600(tmp_path, no_chmod):
    bundle = write_dev_bundle(tmp_path / "pki", "secret")
    assert bundle.signer_key_pem.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert _mode(bundle.signer_key_pem) == 0o600
    assert _mode(bundle.pfx) == 0o600
    assert _mode(bundle.signer_pem) == 0o666  # certificates are public: umask 0 left alone


def test_a_readable_leftover_key_is_made_private_before_it_is_rewritten(tmp_path, no_chmod):
    key = tmp_path / "signer.key"
    key.write_bytes(b"old")
    fd = os.open(key, os.O_RDONLY)  # os.chmod is refused here; set the leftover's mode by fd
    try:
        os.fchmod(fd, 0o644)
    finally:
        os.close(fd)
    write_private(key, b"new")
    assert key.read_bytes() == b"new" and _mode(key) == 0o600
