"""Tracing settings: off by default, refused in one line when it can't work, targets masked."""

from __future__ import annotations

import logging
import sys

import httpx
import pytest
from fastapi import FastAPI
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from services import cli
from shared.settings import ConfigurationError, Settings
from shared.tracing import configure_tracing, instrument_app, temporal_interceptors

ENDPOINT = {"exporter_otlp_endpoint": "http://127.0.0.1:4318"}


@pytest.fixture
def restore_logging():
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


def test_off_without_an_endpoint():
    settings = Settings()
    assert settings.tracing.endpoint is None
    assert configure_tracing(settings, process="api") is None
    assert temporal_interceptors(settings) == []


def test_the_standard_names_turn_it_on(monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/")
    assert Settings().tracing.endpoint == "http://collector:4318/v1/traces"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://other:4318/traces")
    assert Settings().tracing.endpoint == "http://other:4318/traces"
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    assert Settings().tracing.endpoint is None


def test_an_endpoint_without_the_packages_is_refused_in_one_line(monkeypatch, capsys,
                                                                  restore_logging):
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)  # import fails
    with pytest.raises(ConfigurationError) as refused:
        configure_tracing(Settings(tracing=ENDPOINT), process="api")
    message = str(refused.value)
    assert "\n" not in message and "pip install opentelemetry-sdk" in message
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    monkeypatch.setenv("ESTEIRA_LOGGING__TO_FILE", "false")
    assert cli.main(["api"]) == cli.EXIT_CONFIG
    assert "opentelemetry.sdk.trace is missing" in capsys.readouterr().err


def test_an_unsupported_protocol_is_refused():
    settings = Settings(tracing={**ENDPOINT, "exporter_otlp_protocol": "grpc"})
    with pytest.raises(ConfigurationError, match="OTEL_EXPORTER_OTLP_PROTOCOL=grpc"):
        configure_tracing(settings, process="api")


async def test_request_spans_carry_the_target_with_tokens_masked():
    app = FastAPI()

    @app.post("/hook/{token}")
    async def hook(token: str) -> dict:
        return {}

    exported = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    instrument_app(app, Settings(tracing=ENDPOINT), tracer_provider=provider)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://esteira") as http:
        assert (await http.post("/hook/s3cret-T0ken?access_token=also-s3cret&x=1")
                ).status_code == 200
    [span] = exported.get_finished_spans()
    assert span.name == "POST /hook/{token}"
    text = repr(dict(span.attributes or {}))
    assert "s3cret" not in text and "/hook/***" in text and "access_token=***" in text
