"""Constants and external-tool helpers shared by the signer crypto tests."""

import shutil
import subprocess
from pathlib import Path

import pytest

from activities.signer.crypto.policy import SignaturePolicy

PFX_PASSWORD = "test-pfx-password"

# Shaped like ICP-Brasil AD-RB identifiers; the hash values are placeholders, not ITI's.
CADES_POLICY = SignaturePolicy(
    oid="2.16.76.1.7.1.1.2.3",
    hash_value=bytes(range(32)),
    uri="http://politicas.icpbrasil.gov.br/PA_AD_RB_v2_3.der",
)
XADES_POLICY = SignaturePolicy(
    oid="2.16.76.1.7.1.6.2.3",
    hash_value=bytes(range(32, 64)),
    uri="http://politicas.icpbrasil.gov.br/PA_AD_RB_v2_3.xml",
)


def need_tool(name: str, package: str) -> str:
    """Path of an external verifier, or skip the test naming the Debian package to install."""
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} not installed (apt-get install {package})")
    return path


def run_tool(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """Run an external tool, capturing text output, without raising on failure."""
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=60)
