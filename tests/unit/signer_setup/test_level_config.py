"""A profile's level settings are refused when the worker could never honour them."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from activities.signer.level_config import csc_spec, describe_level, tsa_endpoints
from activities.signer.profiles import ProfileConfig

TSA = {"urls": ["http://tsa-1.example/tsa", "http://tsa-2.example/tsa"]}


def _profile(**fields) -> ProfileConfig:
    return ProfileConfig(name="p", pfx_path="/x.pfx", **fields)


def test_levels_above_b_b_need_a_tsa_and_a_format_that_reaches_them():
    assert _profile(format="pades", signature_level="B-LTA", timestamp=TSA)
    assert _profile(format="cades", signature_level="B-T", timestamp=TSA)
    for fields, why in [
        ({"format": "pades", "signature_level": "B-T"}, "needs a timestamp block"),
        ({"signature_level": "B-T", "timestamp": TSA}, "needs a fixed format"),
        ({"format": "cades", "signature_level": "B-LT", "timestamp": TSA},
         "CAdES-LT is not supported"),
        ({"format": "xades", "signature_level": "B-T", "timestamp": TSA},
         "XAdES-T is not supported"),
        ({"format": "pades", "signature_level": "B-LTA", "timestamp": TSA, "encrypt": True},
         "can't be combined with encrypt"),
        ({"format": "pades", "signature_level": "B-X"}, "signature_level"),
    ]:
        with pytest.raises(ValidationError, match=why):
            _profile(**fields)


def test_ad_rt_needs_a_timestamped_level():
    policy = {"policy": "AD-RT", "policy_document": "/p.der", "policy_digest": "00" * 32}
    with pytest.raises(ValidationError, match="AD-RT needs a timestamp"):
        _profile(format="pades", **policy)
    assert _profile(format="pades", signature_level="B-T", timestamp=TSA, **policy)


def test_tsa_credentials_come_from_the_environment_and_are_masked(monkeypatch):
    with pytest.raises(ValidationError, match="basic needs username and password_env"):
        _profile(format="pades", signature_level="B-T",
                 timestamp={**TSA, "auth": "basic", "username": "u"})
    with pytest.raises(ValidationError, match="not in the URL"):
        _profile(format="pades", signature_level="B-T",
                 timestamp={"urls": ["http://u:secret@tsa.example/"]})
    timestamp = {**TSA, "auth": "bearer", "token_env": "TSA_TOKEN"}
    monkeypatch.setenv("TSA_TOKEN", "s3cr3t")
    first, second = tsa_endpoints(timestamp)
    assert second.url == TSA["urls"][1] and second.secret == "s3cr3t"
    assert first.secret == "s3cr3t" and first.url == TSA["urls"][0]
    assert "s3cr3t" not in repr(first)
    shown = describe_level("B-T", timestamp)
    assert shown == ("B-T (TSA http://tsa-1.example/tsa, http://tsa-2.example/tsa; sha256; "
                     "auth bearer ***)")


def test_a_cloud_certificate_needs_its_block_and_one_way_in(monkeypatch):
    csc = {"service_url": "http://csc.example", "credential_id": "a/b", "token_env": "CSC_T",
           "pin_env": "CSC_PIN"}
    profile = ProfileConfig(name="p", format="pades", cert_source="csc", csc=csc)
    monkeypatch.setenv("CSC_T", "tok")
    monkeypatch.setenv("CSC_PIN", "1234")
    spec = csc_spec(profile.csc.model_dump())
    assert (spec.token, spec.pin) == ("tok", "1234")
    assert "tok" not in repr(spec) and "1234" not in repr(spec)
    for fields, why in [
        ({"cert_source": "csc"}, "go together"),
        ({"csc": csc}, "go together"),
        ({"cert_source": "csc", "csc": {**csc, "username": "u", "password_env": "P"}},
         "not both"),
        ({"cert_source": "csc", "format": "xades", "csc": csc}, "PAdES or CAdES"),
    ]:
        with pytest.raises(ValidationError, match=why):
            ProfileConfig(name="p", **{"format": "pades", **fields})
