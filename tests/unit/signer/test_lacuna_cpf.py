"""The holder's CPF: an e-CPF's 2.16.76.1.3.1 or an e-CNPJ's responsible's 2.16.76.1.3.4, then a
`NAME:CPF` common name; an e-CNPJ's CNPJ (2.16.76.1.3.3); a SignerFolder profile on an e-CNPJ."""

from __future__ import annotations

import asyncio
import datetime as dt
from types import SimpleNamespace

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from activities.signer.crypto.certs import DevCertificate, export_pfx
from activities.signer.health import ProfileHealth
from activities.signer.lacuna.cpf import (
    ICP_BRASIL_PF_DATA,
    ICP_BRASIL_PJ_CNPJ,
    ICP_BRASIL_PJ_RESPONSIBLE_DATA,
    cnpj_of,
    cpf_of,
)
from activities.signer.lacuna.health import method_health
from activities.signer.lacuna.methods import holder_action
from activities.signer.models.jobs import SigningProfile
from shared.settings import SignerSettings

RESPONSIBLE_CPF = "52998224725"
CNPJ = "11222333000181"


def _octets(text: str) -> bytes:
    data = text.encode()
    return bytes([0x04, len(data)]) + data  # OCTET STRING, as DOC-ICP-04 writes these fields


def _cert(common_name: str, other_name: bytes | None = None, *,
          others: dict[x509.ObjectIdentifier, bytes] | None = None,
          key=None) -> x509.Certificate:
    key = key or ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = dt.datetime.now(dt.UTC)
    builder = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
               .public_key(key.public_key()).serial_number(1)
               .not_valid_before(now).not_valid_after(now + dt.timedelta(days=1)))
    others = dict(others or {})
    if other_name is not None:
        others[ICP_BRASIL_PF_DATA] = other_name
    if others:
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.OtherName(oid, value) for oid, value in others.items()]), critical=False)
    return builder.sign(key, hashes.SHA256())


def _e_cnpj(key=None, *, responsible: bool = True) -> x509.Certificate:
    others = {ICP_BRASIL_PJ_CNPJ: _octets(CNPJ)}
    if responsible:
        # Birth date, the responsible's CPF, NIS, RG, issuer: the e-CPF's layout.
        others[ICP_BRASIL_PJ_RESPONSIBLE_DATA] = _octets(
            "01021980" + RESPONSIBLE_CPF + "0" * 11 + "0" * 15 + "SSPSP     ")
    return _cert("EMPRESA EXEMPLO LTDA:" + CNPJ, others=others, key=key)


def test_cpf_from_the_icp_brasil_other_name():
    data = b"01021980" + b"12345678909" + b"00000000000" + b"000000000000000"
    der = bytes([0x04, len(data)]) + data  # OCTET STRING
    assert cpf_of(_cert("FULANO", der)) == "12345678909"


def test_cpf_from_the_common_name_and_none_without_one():
    assert cpf_of(_cert("FULANO DE TAL:98765432100")) == "98765432100"
    assert cpf_of(_cert("Esteira DEV Signer")) is None


def test_the_holder_signs_only_its_pending_current_action():
    document = {"status": "Pending", "flowActions": [
        {"id": "a", "step": 1, "status": "Pending", "user": {"identifier": "111"}},
        {"id": "b", "step": 2, "status": "Pending", "user": {"identifier": "222"}}]}
    assert holder_action(document, "a", "111") is None
    assert holder_action(document, "b", "222") == "the flow action is not the current step"
    assert holder_action(document, "a", "999") == \
        "the flow action is not this certificate holder's"
    assert holder_action({**document, "status": "Canceled"}, "a", "111") == \
        "the document is Canceled"
    assert holder_action(document, "zz", "111") == "the flow action no longer exists"


def test_an_e_cnpj_gives_its_responsibles_cpf_and_its_cnpj():
    certificate = _e_cnpj()
    assert cpf_of(certificate) == RESPONSIBLE_CPF
    assert cnpj_of(certificate) == CNPJ
    assert cnpj_of(_cert("FULANO DE TAL:98765432100")) is None


def test_an_e_cnpj_without_the_responsibles_data_has_no_cpf():
    # The CNPJ alone names no person the Signer could match with an action's CPF.
    assert cpf_of(_e_cnpj(responsible=False)) is None


def _pfx_profile(tmp_path, certificate: x509.Certificate, key) -> SigningProfile:
    (tmp_path / "pj.pfx").write_bytes(export_pfx(DevCertificate(certificate, key), "senha"))
    (tmp_path / "pj.pw").write_text("senha")
    return SigningProfile(name="pj", method="SignerFolder", signer_folder_id="pasta",
                          pfx_path=str(tmp_path / "pj.pfx"),
                          pfx_password_file=str(tmp_path / "pj.pw"))


def test_a_signer_folder_profile_on_an_e_cnpj_is_not_degraded(tmp_path):
    settings = SimpleNamespace(signer=SignerSettings(url="http://127.0.0.1:9", api_key="k|k"))
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    healthy = ProfileHealth("pj", True, "ok")
    accepted = asyncio.run(method_health(healthy, _pfx_profile(tmp_path, _e_cnpj(key), key),
                                         settings))  # type: ignore[arg-type]
    assert accepted == healthy
    refused = asyncio.run(method_health(
        healthy, _pfx_profile(tmp_path, _e_cnpj(key, responsible=False), key),
        settings))  # type: ignore[arg-type]
    assert not refused.ok and "carries no CPF" in refused.detail
