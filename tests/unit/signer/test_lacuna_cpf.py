"""The holder's CPF: ICP-Brasil otherName 2.16.76.1.3.1 first, then a `NAME:CPF` common name."""

from __future__ import annotations

import datetime as dt

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from activities.signer.lacuna.cpf import ICP_BRASIL_PF_DATA, cpf_of
from activities.signer.lacuna.methods import holder_action


def _cert(common_name: str, other_name: bytes | None = None) -> x509.Certificate:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = dt.datetime.now(dt.UTC)
    builder = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
               .public_key(key.public_key()).serial_number(1)
               .not_valid_before(now).not_valid_after(now + dt.timedelta(days=1)))
    if other_name is not None:
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.OtherName(ICP_BRASIL_PF_DATA, other_name)]), critical=False)
    return builder.sign(key, hashes.SHA256())


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
