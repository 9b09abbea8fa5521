"""Optional OpenTelemetry traces: REST doors and Temporal clients and workers, OTLP/HTTP out.

Off unless an OTLP endpoint is set (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
`OTEL_EXPORTER_OTLP_ENDPOINT`); the OpenTelemetry modules are imported only then.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from temporalio.client import Interceptor

from shared.http_redaction import TargetRedactor
from shared.settings import ConfigurationError, Settings
from shared.version import short_version

SUPPORTED_PROTOCOL = "http/protobuf"
# The distributions tracing needs, named in the refusal when one is missing.
PACKAGES = ("opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http",
            "opentelemetry-instrumentation-fastapi")
# Span attributes that carry the request target, rewritten with tokens masked.
_PATH_KEYS = ("http.target", "url.path")
_QUERY_KEYS = ("url.query",)
_URL_KEYS = ("http.url", "url.full")


def tracing_on(settings: Settings) -> bool:
    """Whether this deployment exports traces."""
    return settings.tracing.endpoint is not None


def configure_tracing(settings: Settings, *, process: str) -> Any | None:
    """Install the global tracer provider exporting to the OTLP endpoint; None when off.

    Spans leave in batches; the provider flushes what is left when the process exits.
    """
    endpoint = settings.tracing.endpoint
    if endpoint is None:
        return None
    if settings.tracing.protocol != SUPPORTED_PROTOCOL:
        raise ConfigurationError(
            f"Invalid configuration: OTEL_EXPORTER_OTLP_PROTOCOL={settings.tracing.protocol} "
            f"is not supported; tracing exports over {SUPPORTED_PROTOCOL} (port 4318).")
    trace = _module("opentelemetry.trace")
    sdk = _module("opentelemetry.sdk.trace")
    export = _module("opentelemetry.sdk.trace.export")
    resources = _module("opentelemetry.sdk.resources")
    exporter = _module("opentelemetry.exporter.otlp.proto.http.trace_exporter")
    headers = _module("opentelemetry.util.re").parse_env_headers(settings.tracing.headers,
                                                                liberal=True)
    resource = resources.Resource.create({
        "service.name": settings.tracing.service_name or f"esteira-{process}",
        "service.version": short_version()})
    provider = sdk.TracerProvider(resource=resource)
    provider.add_span_processor(export.BatchSpanProcessor(
        exporter.OTLPSpanExporter(endpoint=endpoint, headers=headers)))
    trace.set_tracer_provider(provider)
    return provider


def temporal_interceptors(settings: Settings) -> Sequence[Interceptor]:
    """Temporal's tracing interceptor when tracing is on: given to the client, it also
    traces every worker built on that client (workflow and activity spans)."""
    if not tracing_on(settings):
        return []
    interceptor: Interceptor = _module("temporalio.contrib.opentelemetry").TracingInterceptor()
    return [interceptor]


def instrument_app(app: Any, settings: Settings, *, tracer_provider: Any = None) -> None:
    """Server spans for every request of a FastAPI app, targets masked as in the access log
    (`tracer_provider`: the global one unless given)."""
    if not tracing_on(settings):
        return
    redactor = TargetRedactor(app)

    def mask_target(span: Any, scope: dict[str, Any]) -> None:
        attributes = getattr(span, "attributes", None) or {}
        query = scope.get("query_string", b"").decode("latin-1")
        masked = redactor.target(scope)
        for key in _PATH_KEYS:
            if key in attributes:
                span.set_attribute(key, masked if key == "http.target" else redactor.path(scope))
        for key in _QUERY_KEYS:
            if key in attributes:
                span.set_attribute(key, redactor.query(query))
        for key in _URL_KEYS:
            if key in attributes:
                parts = urlsplit(str(attributes[key]))
                span.set_attribute(key, f"{parts.scheme}://{parts.netloc}{masked}")

    _module("opentelemetry.instrumentation.fastapi").FastAPIInstrumentor.instrument_app(
        app, server_request_hook=mask_target, exclude_spans=["receive", "send"],
        tracer_provider=tracer_provider)


def _module(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError:
        raise ConfigurationError(
            "Invalid configuration: an OpenTelemetry endpoint is set (OTEL_EXPORTER_OTLP_"
            f"[TRACES_]ENDPOINT) but {name} is missing: pip install {' '.join(PACKAGES)}"
        ) from None
