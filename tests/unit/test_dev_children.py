"""What `esteira dev` starts: stand-ins of external systems only in Development."""

import pytest

from services.dev.lacuna_sim import lacuna_dev_env
from services.dev.main import DevStartupError, _check_api_key_source, _service_specs
from shared.settings import Settings

STAND_INS = {"midaz-sim", "mensageria-sim", "turnstile-sim", "lacuna-sim", "smtp-sink"}
SERVICES = {"worker", "grpc", "watcher", "api", "webhook"}


def test_development_runs_the_simulators_beside_the_services():
    assert {spec.name for spec in _service_specs({}, simulators=True)} == STAND_INS | SERVICES


def test_production_never_starts_a_simulator():
    assert {spec.name for spec in _service_specs({}, simulators=False)} == SERVICES


def test_production_never_points_the_signer_at_the_simulator(tmp_path):
    dev = Settings(data_dir=tmp_path, environment="Development")
    prod = Settings(data_dir=tmp_path, environment="Production")
    assert lacuna_dev_env(dev)["ESTEIRA_SIGNER__URL"].startswith("http://")
    assert lacuna_dev_env(prod) == {}


def test_only_development_may_generate_the_api_key(tmp_path):
    with pytest.raises(DevStartupError, match=r"^ESTEIRA_API_KEY is required") as refused:
        _check_api_key_source(Settings(data_dir=tmp_path, environment="Production"))
    assert "\n" not in str(refused.value)
    with pytest.raises(DevStartupError):
        _check_api_key_source(Settings(data_dir=tmp_path, environment="Production", api_key=""))
    _check_api_key_source(Settings(data_dir=tmp_path, environment="Production", api_key="k"))
    _check_api_key_source(Settings(data_dir=tmp_path, environment="Development"))
