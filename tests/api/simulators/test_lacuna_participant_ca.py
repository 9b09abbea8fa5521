"""The participants' CA outlives a simulator restart, so a profile can trust its file."""

from __future__ import annotations

import stat

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.primitives.serialization import pkcs12

from services.dev.lacuna_sim import sim_settings
from services.simulators.lacuna.participant_pki import CA_FILE, CA_KEY_FILE, ParticipantPki
from shared.settings import Settings

ANA = {"name": "Ana", "identifier": "52998224725", "email": "ana@example.com"}


def test_a_restarted_simulator_signs_under_the_ca_it_kept(tmp_path):
    first = ParticipantPki(tmp_path)
    kept = (tmp_path / CA_FILE).read_bytes()
    assert kept == first.ca_pem()
    assert stat.S_IMODE((tmp_path / CA_KEY_FILE).stat().st_mode) == 0o600
    again = ParticipantPki(tmp_path)
    assert again.ca_pem() == kept, "a restart must not invalidate the profiles' trust roots"
    ca = x509.load_pem_x509_certificate(kept)
    leaf = pkcs12.load_key_and_certificates(again.pfx_for(ANA), None)[1]
    ca.public_key().verify(leaf.signature, leaf.tbs_certificate_bytes, padding.PKCS1v15(),
                           leaf.signature_hash_algorithm)
    assert leaf.issuer == ca.subject


def test_without_a_folder_each_start_makes_its_own_ca():
    assert ParticipantPki().ca_pem() != ParticipantPki().ca_pem()


def test_make_run_starts_the_simulator_with_own_certificates_kept_in_data_pki(tmp_path):
    settings = Settings(data_dir=tmp_path / "data")
    sim = sim_settings(settings)
    assert sim.participant_certificates == "own"
    assert sim.participant_ca_dir == str((tmp_path / "data" / "pki").resolve())
