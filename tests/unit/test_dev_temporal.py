"""The embedded Temporal dev server: loopback by default, its Web UI read-only unless asked."""

from __future__ import annotations

import json

import httpx
import pytest
from pydantic import ValidationError

from services.dev import main as dev_main
from services.dev.temporal_server import dev_server_args
from services.dev.temporal_ui_proxy import READ_ONLY_CODE, SETTINGS_PATH, create_app
from shared.settings import Settings


def _flag(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


def test_frontend_and_ui_bind_to_loopback_even_when_the_services_listen_everywhere(tmp_path):
    settings = Settings(data_dir=tmp_path, host="0.0.0.0")
    args = dev_server_args(settings, ui_upstream_port=41234)
    assert _flag(args, "--ip") == "127.0.0.1"
    assert (_flag(args, "--ui-ip"), _flag(args, "--ui-port")) == ("127.0.0.1", "41234")


def test_a_setting_opens_the_frontend_and_a_writable_ui_on_its_own_port(tmp_path, monkeypatch):
    monkeypatch.setenv("ESTEIRA_TEMPORAL_SERVER__BIND_HOST", "0.0.0.0")
    monkeypatch.setenv("ESTEIRA_TEMPORAL_SERVER__UI_WRITE_ACTIONS", "true")
    settings = Settings(data_dir=tmp_path)
    assert settings.temporal_server.ui_write_actions is True
    args = dev_server_args(settings)
    assert _flag(args, "--ip") == "0.0.0.0"
    assert (_flag(args, "--ui-ip"), _flag(args, "--ui-port")) == (
        "0.0.0.0", str(settings.ports.temporal_ui))


def _dynamic_config(args: list[str]) -> list[str]:
    return [args[i + 1] for i, flag in enumerate(args) if flag == "--dynamic-config-value"]


def test_the_dev_server_gets_our_timer_shift_by_default(tmp_path):
    assert _dynamic_config(dev_server_args(Settings(data_dir=tmp_path))) == [
        'history.timerProcessorMaxTimeShift="10ms"']


def test_configured_values_go_as_json_once_each_over_ours(tmp_path, monkeypatch):
    monkeypatch.setenv("ESTEIRA_TEMPORAL_SERVER__DYNAMIC_CONFIG", json.dumps({
        "history.transferProcessorMaxPollRPS": 5, "history.timerProcessorMaxTimeShift": "1s",
        "system.enableEagerWorkflowStart": True}))
    flags = _dynamic_config(dev_server_args(Settings(data_dir=tmp_path)))
    assert sorted(flags) == ['history.timerProcessorMaxTimeShift="1s"',
                             "history.transferProcessorMaxPollRPS=5",
                             "system.enableEagerWorkflowStart=true"]


@pytest.mark.parametrize("key", ["--ip", "history", "history.", "history.a b", "x=1.y"])
def test_a_key_that_is_no_dynamic_config_key_stops_the_settings(tmp_path, key):
    with pytest.raises(ValidationError, match="not a dynamic config key"):
        Settings(data_dir=tmp_path, temporal_server={"dynamic_config": {key: 1}})


@pytest.fixture
async def door():
    seen: list[httpx.Request] = []

    def upstream(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == SETTINGS_PATH:
            return httpx.Response(200, json={"DisableWriteActions": False, "Version": "x"})
        return httpx.Response(200, text="page")

    app = create_app("http://ui.upstream", transport=httpx.MockTransport(upstream))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://door") as client:
        yield client, seen


async def test_the_ui_door_passes_reads_and_marks_the_ui_read_only(door):
    client, seen = door
    page = await client.get("/namespaces/default/workflows?query=x")
    assert (page.status_code, page.text) == (200, "page")
    assert seen[0].url.path == "/namespaces/default/workflows" and seen[0].url.query == b"query=x"
    settings = await client.get(SETTINGS_PATH)
    assert json.loads(settings.content) == {"DisableWriteActions": True, "Version": "x"}


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
async def test_the_ui_door_refuses_every_write(door, method):
    client, seen = door
    response = await client.request(
        method, "/api/v1/namespaces/default/workflows/w/terminate", json={})
    assert response.status_code == 403
    assert response.json()["code"] == READ_ONLY_CODE
    assert seen == []


class _Recorder:
    def __init__(self) -> None:
        self.specs: list = []

    async def start(self, spec) -> None:
        self.specs.append(spec)


async def test_the_server_runs_in_a_private_network_with_the_door_on_a_unix_socket(
        tmp_path, monkeypatch):
    async def available() -> bool:
        return True

    monkeypatch.setattr(dev_main, "_private_network_available", available)
    settings = Settings(data_dir=tmp_path)
    recorder = _Recorder()
    await dev_main._start_embedded_temporal(settings, recorder, {}, tmp_path / "ui")
    server, door = recorder.specs
    assert server.argv[1:3] == ["-m", "services.dev.temporal_sandbox"]
    assert _flag(server.argv, "--frontend") == f"127.0.0.1:{settings.ports.temporal}"
    inner = server.argv[server.argv.index("--") + 1:]
    assert _flag(inner, "--ui-port") == _flag(server.argv, "--ui-port")
    assert door.argv[-1] == f"unix:{tmp_path / 'ui' / 'temporal-ui.sock'}"


async def test_without_a_private_network_the_ui_port_is_on_loopback_and_a_warning_says_so(
        tmp_path, monkeypatch, caplog):
    async def unavailable() -> bool:
        return False

    monkeypatch.setattr(dev_main, "_private_network_available", unavailable)
    recorder = _Recorder()
    await dev_main._start_embedded_temporal(Settings(data_dir=tmp_path), recorder, {}, tmp_path)
    server, door = recorder.specs
    assert server.argv[1:3] == ["server", "start-dev"]
    assert door.argv[-1] == f"http://127.0.0.1:{_flag(server.argv, '--ui-port')}"
    assert "reachable by every local process" in caplog.text
