"""KEYLESS verification: each signature must be an approver's, each signing approver's there."""

from __future__ import annotations

import pytest

from activities.signer.crypto.samples import make_pdf
from activities.signer.lacuna.keyless import missing_signatures
from services.simulators.lacuna.participant_pki import ParticipantPki
from services.simulators.lacuna.participants import sign_with
from tests.support.lacuna import KEYLESS_APPROVERS, keyless_profile

ANA, BRUNO = ({"name": a["name"], "identifier": a["cpf"]} for a in KEYLESS_APPROVERS)
STRANGER = {"name": "Outro", "identifier": "39053344705"}


@pytest.fixture(scope="module")
def pki() -> ParticipantPki:
    return ParticipantPki()


def _signed_by(pki: ParticipantPki, *people: dict) -> bytes:
    pdf = make_pdf(4_000, pages=1)
    for person in people:
        pdf = sign_with(pki.pfx_for(person), None, "c.pdf", pdf)
    return pdf


def test_each_approver_signed_with_their_own_certificate(pki):
    profile = keyless_profile("k", quorum=2, trust_roots=[])
    signed = frozenset({ANA["identifier"], BRUNO["identifier"]})
    assert missing_signatures(profile, signed, _signed_by(pki, ANA, BRUNO)) is None


@pytest.mark.parametrize(("people", "why"), [
    ((ANA, STRANGER), "not by an approver"),
    ((ANA,), "no signature of the approver(s) with CPF 52998224725"),
])
def test_a_stranger_or_a_missing_approver_fails_verification(pki, people, why):
    profile = keyless_profile("k", quorum=2, trust_roots=[])
    signed = frozenset({ANA["identifier"], BRUNO["identifier"]})
    assert why in (missing_signatures(profile, signed, _signed_by(pki, *people)) or "")


def test_fewer_approver_signatures_than_the_quorum_fail(pki):
    profile = keyless_profile("k", quorum=2, trust_roots=[])
    why = missing_signatures(profile, frozenset({ANA["identifier"]}), _signed_by(pki, ANA))
    assert why == "1 approver signature(s); the quorum is 2"
