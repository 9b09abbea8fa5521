"""A profile saved through a door names key files in the allowed key directories only, and
never one of the service's own settings as its secret."""

from __future__ import annotations

import pytest

from tests.api.conftest import API_KEY

AUTH = {"X-API-Key": API_KEY}
REFUSED_PATHS = ["/etc/shadow", "/etc/esteira/certs/../../shadow", "/etc/esteira/esteira.env",
                 "/etc/esteira/certs-other/x.pfx", "relative.pfx"]


async def _create(api, **fields):
    return await api.post("/api/profiles", headers=AUTH, json={"name": "p1", **fields})


@pytest.mark.parametrize("path", REFUSED_PATHS)
@pytest.mark.parametrize("field", ["pfx_path", "pfx_password_file"])
async def test_a_key_file_outside_the_key_directories_is_refused_at_save(api, field, path):
    extra = {"pfx_path": "/etc/esteira/certs/ok.pfx"} if field == "pfx_password_file" else {}
    answer = await _create(api, **extra, **{field: path})
    assert (answer.status_code, answer.json()["code"]) == (422, "profile.invalid")
    assert field in answer.json()["detail"]
    assert "ESTEIRA_SIGNING__KEY_DIRECTORIES" in answer.json()["detail"]
    listed = (await api.get("/api/profiles", headers=AUTH)).json()["items"]
    assert "p1" not in {p["name"] for p in listed}


async def test_the_default_key_directories_take_the_data_directory_s_certs(api):
    certs = api.context.settings.data_dir.resolve() / "certs" / "folha.pfx"
    answer = await _create(api, pfx_path=str(certs), pfx_password_env="FOLHA_PFX_PASSWORD")
    assert answer.status_code == 201, answer.text


async def test_configured_key_directories_replace_the_defaults(api, tmp_path):
    api.context.settings.signing.key_directories = [str(tmp_path / "keys")]
    refused = await _create(api, pfx_path="/etc/esteira/certs/folha.pfx")
    assert (refused.status_code, refused.json()["code"]) == (422, "profile.invalid")
    assert str(tmp_path / "keys") in refused.json()["detail"]
    taken = await _create(api, pfx_path=str(tmp_path / "keys" / "folha.pfx"))
    assert taken.status_code == 201, taken.text


@pytest.mark.parametrize("field", ["pfx_password_env", "pkcs11_pin_env"])
@pytest.mark.parametrize("variable", ["ESTEIRA_API_KEY", "esteira_database_url",
                                      "ESTEIRA_SIGNING__PROFILE_SECRETS_KEY"])
async def test_a_secret_variable_may_not_be_one_of_the_service_s_own_settings(
        api, field, variable, monkeypatch):
    monkeypatch.setenv(variable.upper(), "s3cret-value-never-echoed")
    answer = await _create(api, pfx_path="/etc/esteira/certs/ok.pfx", **{field: variable})
    assert (answer.status_code, answer.json()["code"]) == (422, "profile.invalid")
    assert "s3cret-value-never-echoed" not in answer.text
